// Package cgroup puts a sandbox's process tree under memory, pids and CPU
// limits using Linux control groups, and can kill the whole tree.
//
// It writes cgroupfs files directly and supports the three host layouts in
// use today: pure cgroup v2 (the unified hierarchy owns every controller),
// v1 only (one hierarchy per controller or controller set), and hybrid (a v2
// hierarchy, often at /sys/fs/cgroup/unified, mounted next to v1 controller
// hierarchies). Each limit is enforced by whichever hierarchy owns its
// controller; a v2 group, when one can be made, is also used to track the
// tree, to place children atomically (SysProcAttr.CgroupFD) and to kill it
// (cgroup.kill).
//
// Groups are created below this process's own cgroup in each hierarchy, as
// read from /proc/self/cgroup and /proc/self/mountinfo.
//
// On operating systems other than Linux every entry point fails with an
// error wrapping ErrUnavailable.
package cgroup

import "errors"

// ErrUnavailable is wrapped by the error New returns when this process
// cannot create cgroups at all: it is not root and the hierarchy was not
// delegated to it, no cgroup filesystem is mounted, or the OS has no
// cgroups. Test with errors.Is.
var ErrUnavailable = errors.New("cgroup: unavailable")

// Limits are the resource limits applied to a Group. The zero value means no
// limits: New then makes a group only to track and kill the process tree.
type Limits struct {
	// MemoryBytes caps the memory charged to the group, in bytes. On v2
	// it is written to memory.max and swap is disabled (memory.swap.max=0)
	// where the kernel has swap accounting; on v1 to
	// memory.limit_in_bytes and, where present,
	// memory.memsw.limit_in_bytes. Going over it gets processes
	// OOM-killed. Zero means no limit; negative is an error.
	MemoryBytes int64

	// MaxProcs caps the number of tasks (processes and threads) in the
	// group (pids.max); fork and clone fail with EAGAIN beyond it. Zero
	// means no limit; negative is an error.
	MaxProcs int64

	// CPUQuotaPercent caps CPU time as a percentage of one CPU over each
	// 100 ms period: 50 is half a CPU, 200 two CPUs (v2 cpu.max, v1
	// cpu.cfs_quota_us and cpu.cfs_period_us). Zero means no limit;
	// negative is an error.
	CPUQuotaPercent int
}

// Info is what Probe found out about this host's cgroups and what this
// process could do with them. The zero value means nothing was found.
type Info struct {
	// V2Mount is the mount point of the cgroup v2 (unified) hierarchy,
	// or "" if none is mounted.
	V2Mount string

	// V2Controllers lists the controllers bound to the v2 hierarchy (its
	// root cgroup.controllers), e.g. [hugetlb] on a hybrid host; nil if
	// there is no v2 hierarchy or none is bound to it.
	V2Controllers []string

	// V1 maps each v1 controller this process can see (and named
	// hierarchies such as "name=systemd") to its mount point; nil or empty
	// if no v1 hierarchy is mounted.
	V1 map[string]string

	// Memory, Pids and CPU name the hierarchy that would enforce that
	// limit: "v2", "v1", or "" if the controller is unavailable.
	Memory, Pids, CPU string

	// Kill names how Group.Kill would work, as in Group.Enforced: "v2"
	// (cgroup.kill), "v2-freeze", "v1-freezer" or "signal". It is "" if
	// no scratch group could be created.
	Kill string

	// Delegated, for a process that is not root, is the delegated cgroup
	// v2 subtree (such as systemd's user@UID.service) that groups would
	// be made in; "" for root, or when none holds this process.
	Delegated string

	// Writable is true if a scratch group could be created (and removed
	// again) in every hierarchy a limited Group would use. Probe does not
	// enable v2 controllers in cgroup.subtree_control, so on a pure v2
	// host New may still fail to apply limits that Writable suggests.
	Writable bool

	// Reason says why Writable is false (or why nothing was found); ""
	// when Writable is true.
	Reason string
}
