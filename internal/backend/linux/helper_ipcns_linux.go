package linux

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// SysV IPC objects (shared memory segments, message queues, semaphore
// arrays) are kernel memory that no process's RSS shows, and a detached
// segment outlives every process. The kernel bounds them per IPC namespace
// with the kernel.shm*, kernel.msg* and kernel.sem sysctls, which the
// namespace's root may set. The sandbox's root user is not its root (moat
// maps the user to itself), so the zygote makes the sandbox's IPC
// namespace from a nested user namespace that maps the same user to 0:
// the sysctls are then the user's to write, the zygote writes them to fit
// the memory limit, and the sandbox, confined by Landlock and a read-only
// /proc/sys, cannot change them back.

// ipcLimit is one sysctl of an IPC namespace, relative to /proc/sys.
type ipcLimit struct {
	file, value string
}

// semBytes is about what one semaphore costs the kernel (struct sem is
// cache-line aligned), to turn a byte budget into a count.
const semBytes = 64

// ipcLimits are the sysctls that keep the IPC namespace of a sandbox with
// memory limit m within it: SysV shared memory in all at most m (shmall,
// in pages) and each segment at most m; message text and semaphores at
// most an eighth of m each; orphaned segments removed (shm_rmid_forced).
// The memory watch bounds their sum, message headers included (which
// these counts do not bound: see msgHeaderBytes). m must be positive.
func ipcLimits(m int64, pageSize int64) []ipcLimit {
	share := max(m/8, 1)
	msgmnb := min(int64(16384), share)
	msgmni := clamp(share/msgmnb, 1, 32000)
	semmns := clamp(share/semBytes, 1, 32000*32000)
	semmsl := min(semmns, 32000)
	semmni := min(semmns, 32000)
	i := func(n int64) string { return strconv.FormatInt(n, 10) }
	return []ipcLimit{
		{"kernel/shmmax", i(m)},
		{"kernel/shmall", i(max(m/pageSize, 1))},
		{"kernel/shm_rmid_forced", "1"},
		{"kernel/msgmnb", i(msgmnb)},
		{"kernel/msgmax", i(min(msgmnb, 8192))},
		{"kernel/msgmni", i(msgmni)},
		{"kernel/sem", fmt.Sprintf("%d %d %d %d", semmsl, semmns, 500, semmni)},
	}
}

func clamp(v, lo, hi int64) int64 { return max(lo, min(v, hi)) }

// newLimitedIPC makes an IPC namespace owned by a nested user namespace in
// which the caller's user is 0, moves the calling thread into it and sets
// its limits for memory limit m. It returns the namespace's descriptor,
// which each command's thread joins. The calling thread must be locked.
func newLimitedIPC(m int64) (int, error) {
	uid, gid := os.Geteuid(), os.Getegid()
	// The holder only keeps the namespaces alive until we joined them: a
	// raw child (helper_rawfork_linux.go) that sleeps until killed.
	// The child's /proc files, its uid_map among them, belong to us only
	// while it is dumpable, which it inherits from us. No command runs
	// yet while the zygote is dumpable for this moment.
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0)
	pid, errno := rawClone(unix.CLONE_NEWUSER|unix.CLONE_NEWIPC, holderChild, nil)
	var err error
	if errno != 0 {
		err = errno
	} else {
		err = mapHolder(pid, uid, gid)
	}
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	defer func() {
		if pid > 0 {
			// The namespaces live on in us.
			_ = unix.Kill(pid, unix.SIGKILL)
			go reapKilled(pid) // off the start-up path
		}
	}()
	if err != nil {
		return -1, fmt.Errorf("ipc namespace: start its holder: %w", err)
	}
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/ns/ipc", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("ipc namespace: open: %w", err)
	}
	if err := unix.Setns(fd, unix.CLONE_NEWIPC); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("join ipc namespace: %w", err)
	}
	for _, l := range ipcLimits(m, int64(os.Getpagesize())) {
		// /proc/sys/kernel is the calling thread's IPC namespace.
		if err := writeThreadFile("/proc/sys/"+l.file, l.value); err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("ipc limit %s=%s: %w", l.file, l.value, err)
		}
	}
	return fd, nil
}

// mapHolder maps the holder's user namespace: our user and group are 0
// there.
func mapHolder(pid, uid, gid int) error {
	dir := "/proc/" + strconv.Itoa(pid) + "/"
	for _, f := range []struct{ file, value string }{
		{"uid_map", fmt.Sprintf("0 %d 1\n", uid)},
		{"setgroups", "deny"},
		{"gid_map", fmt.Sprintf("0 %d 1\n", gid)},
	} {
		if err := writeThreadFile(dir+f.file, f.value); err != nil {
			return fmt.Errorf("%s: %w", f.file, err)
		}
	}
	return nil
}

// writeThreadFile writes value to file with raw calls on the calling
// thread, whose namespaces decide what /proc/sys shows.
func writeThreadFile(file, value string) error {
	fd, err := unix.Open(file, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	_, err = unix.Write(fd, []byte(value))
	return err
}
