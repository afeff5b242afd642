package linux

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// initStart is an init that has been forked and boots while the zygote
// builds the rest of the sandbox.
type initStart struct {
	sock        int
	pid         int // the init's pid in the zygote's PID namespace, which the zygote must reap
	memoryBytes int64
}

// goAheadSize is the zygote's go-ahead to the init: a 1, the memory limit
// (8 bytes, little-endian) and the count of moat's own IPv4 TCP listeners.
const goAheadSize = 10

// forkInit starts the sandbox's init as the first process of the PID
// namespace the calling thread unshared, with initSock (moat's control
// socket for it) as its descriptor 3.
func forkInit(initSock int, memoryBytes int64) (*initStart, error) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(pair[1])
	null, err := unix.Open(os.DevNull, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Close(pair[0])
		return nil, err
	}
	defer unix.Close(null)
	pid, err := syscall.ForkExec("/proc/self/exe", []string{"moat-init"}, &syscall.ProcAttr{
		Env:   []string{HelperEnv + "=init"},
		Files: []uintptr{uintptr(null), uintptr(null), uintptr(null), uintptr(initSock), uintptr(pair[1])},
		Sys: &syscall.SysProcAttr{
			AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN},
			Pdeathsig:   syscall.SIGKILL,
		},
	})
	if err != nil {
		unix.Close(pair[0])
		return nil, fmt.Errorf("start init: %w", err)
	}
	return &initStart{sock: pair[0], pid: pid, memoryBytes: memoryBytes}, nil
}

// namespace opens the sandbox's PID namespace, which needs its init to
// exist, through the host's /proc, before the sandbox's root replaces it.
func (i *initStart) namespace() (int, error) {
	fd, err := unix.Open("/proc/thread-self/ns/pid_for_children", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("pid namespace: %w", err)
	}
	return fd, nil
}

// finish lets the init mount the sandbox's /proc, which it does once the
// sandbox's root is in place, and waits until it has. ownTCP4 is how many
// IPv4 TCP sockets of the network namespace are moat's own listeners (the
// DNS stub, the proxy), which the memory watch need not dump for.
func (i *initStart) finish(pidns, ownTCP4 int) error {
	defer unix.Close(i.sock)
	var goAhead [goAheadSize]byte
	goAhead[0] = 1
	binary.LittleEndian.PutUint64(goAhead[1:], uint64(i.memoryBytes))
	goAhead[9] = byte(ownTCP4)
	if _, err := unix.Write(i.sock, goAhead[:]); err != nil {
		return fmt.Errorf("init: %w", err)
	}
	buf := make([]byte, 512)
	n, _ := unix.Read(i.sock, buf)
	if n <= 0 || string(buf[:n]) != "ok\n" {
		if n <= 0 {
			return fmt.Errorf("init exited before it was ready")
		}
		return fmt.Errorf("init: %s", buf[:n])
	}
	return nil
}

// initMain is the init role: PID 1 of the sandbox. It mounts the sandbox's
// /proc, then reaps orphans, kills every other process of the sandbox when
// moat asks (a sweep, once no command runs), and exits when moat's control
// socket closes, which ends the whole PID namespace.
func initMain() int {
	_ = closeStrayFDs(ctrlFD)
	// Orphans must be reaped even while we wait on the socket.
	go reapForever()
	// Read with raw calls: an *os.File here would close the descriptor
	// again when collected, by then maybe the runtime's own epoll.
	var goAhead [goAheadSize]byte
	if !readFull(statusFD, goAhead[:]) {
		return 125
	}
	w := &memoryWatch{limit: int64(binary.LittleEndian.Uint64(goAhead[1:])), ownTCP4: int(goAhead[9])}
	// The zygote's new root is still being built at stagingRoot; its /proc
	// becomes the sandbox's /proc when the zygote pivots into it.
	if err := unix.Mount("proc", stagingRoot+"/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		_, _ = unix.Write(statusFD, []byte(fmt.Sprintf("mount /proc: %v", err)))
		return 125
	}
	// The IPC namespace's limits are the sandbox user's to write (see
	// newLimitedIPC); Landlock refuses it, and so does this mount.
	if err := readOnlySysctl(stagingRoot + "/proc/sys"); err != nil {
		_, _ = unix.Write(statusFD, []byte(fmt.Sprintf("read-only /proc/sys: %v", err)))
		return 125
	}
	w.openShm(stagingRoot + "/dev/shm")
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	if err := dropCapabilities(); err != nil {
		_, _ = unix.Write(statusFD, []byte(err.Error()))
		return 125
	}
	_, _ = unix.Write(statusFD, []byte("ok\n"))
	unix.Close(statusFD)
	if w.limit > 0 {
		go w.run()
	}
	for {
		var req initRequest
		fds, err := recvMessage(ctrlFD, &req)
		closeFDs(fds)
		if err != nil {
			return 0 // moat is gone or closed the sandbox: PID 1 exits, the kernel kills the rest
		}
		if req.Sweep {
			_ = unix.Kill(-1, unix.SIGKILL) // every process of the namespace but PID 1
		}
		exceeded, detail := w.takeExceeded()
		if err := sendMessage(ctrlFD, initReply{MemoryExceeded: exceeded, MemoryDetail: detail}, nil); err != nil {
			return 0
		}
	}
}

// readOnlySysctl binds dir onto itself read-only.
func readOnlySysctl(dir string) error {
	if err := unix.Mount(dir, dir, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return err
	}
	return unix.Mount("", dir, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
}

// reapForever reaps every child the init inherits: the commands' orphans.
func reapForever() {
	sig := make(chan os.Signal, 8)
	signal.Notify(sig, unix.SIGCHLD)
	for {
		for {
			var ws unix.WaitStatus
			pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
		<-sig
	}
}

// readFull reads len(b) bytes from fd.
func readFull(fd int, b []byte) bool {
	for off := 0; off < len(b); {
		n, err := unix.Read(fd, b[off:])
		if err == unix.EINTR {
			continue
		}
		if n <= 0 || err != nil {
			return false
		}
		off += n
	}
	return true
}
