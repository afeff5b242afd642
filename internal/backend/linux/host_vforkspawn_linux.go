package linux

import (
	"fmt"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// A child in a new user namespace is forked by os/exec, not vforked: the
// parent has to write the child's uid and gid maps while the child waits
// before its exec, and a vforked child's parent is suspended until that
// exec. Forking moat copies its page tables and leaves every page of it
// copy-on-write until the child's exec; with moat's other threads busy
// working out the policy meanwhile, each page they write costs a copy and
// a TLB shootdown on the other CPUs: about 6% of the CPU time of a `moat
// run`, measured. So the zygote is vforked instead (CLONE_VM|CLONE_VFORK, the
// way os/exec starts every child without a user namespace, whose child
// code is written for a shared address space), with no maps to wait for,
// and moat writes the maps once the zygote has exec'd. The zygote runs as
// the overflow user until then, which it does not notice: the first thing
// it does is wait for its spec, which is sent only after the maps.

// vforkNamespaceAttr is namespaceAttr for a child that shares moat's
// memory until its exec and has its maps written afterwards, by
// mapSpawnedUser.
//
// Exec'd before it is mapped, the zygote is never root in its namespace,
// even when moat runs as root: it keeps only namespaceAttr's ambient
// capabilities, where a zygote mapped before its exec had them all. Run
// as root it needs one more, CAP_SETFCAP: the IPC namespace's holder maps
// root to root, and the kernel lets a namespace map its parent's root
// only for a writer that may set file capabilities there.
func vforkNamespaceAttr(flags uintptr) *syscall.SysProcAttr {
	a := namespaceAttr(flags | syscall.CLONE_VM | syscall.CLONE_VFORK)
	a.UidMappings, a.GidMappings = nil, nil
	if os.Geteuid() == 0 {
		a.AmbientCaps = append(a.AmbientCaps, unix.CAP_SETFCAP)
	}
	return a
}

// mapSpawnedUser maps the caller's uid and gid to themselves in the user
// namespace of pid, a child started with vforkNamespaceAttr, as
// namespaceAttr's maps do. A map can be written once: if anything else
// wrote one first, this fails and the child must not be used.
func mapSpawnedUser(pid int) error {
	uid, gid := os.Geteuid(), os.Getegid()
	dir := "/proc/" + strconv.Itoa(pid) + "/"
	for _, f := range []struct{ file, value string }{
		{"uid_map", fmt.Sprintf("%d %d 1\n", uid, uid)},
		{"setgroups", "deny"},
		{"gid_map", fmt.Sprintf("%d %d 1\n", gid, gid)},
	} {
		if err := writeThreadFile(dir+f.file, f.value); err != nil {
			return fmt.Errorf("map the helper's user namespace: %s: %w", f.file, err)
		}
	}
	return nil
}
