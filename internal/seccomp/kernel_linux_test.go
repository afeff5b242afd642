package seccomp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel test re-executes the test binary. With childEnv set, TestMain
// runs runChild instead of the tests: it locks its OS thread, optionally
// installs the native program there, runs kernelProbes on that same thread
// and prints one "name errno" line per probe (errno 0: success).
const childEnv = "MOAT_SECCOMP_TEST_CHILD"

// Child modes.
const (
	modeNone   = "none"   // no filter: the positive control
	modeStrict = "strict" // Options{}
	modeInet   = "inet"   // Options{AllowInetStream: true}
)

func TestMain(m *testing.M) {
	if mode, ok := os.LookupEnv(childEnv); ok {
		os.Exit(runChild(mode))
	}
	os.Exit(m.Run())
}

// expect is what a probe should return in one mode.
type expect int

const (
	succeeds expect = iota
	eperm
	notEPERM     // fails or succeeds, but not with EPERM
	notEPERMSoft // as notEPERM, but host policy may say EPERM; then only logged
	unchecked
)

type kernelProbe struct {
	name string
	// call runs on the child's locked thread; devnull is an open /dev/null.
	call               func(devnull int) unix.Errno
	none, strict, inet expect
}

var kernelProbes = []kernelProbe{
	{"getpid", func(int) unix.Errno {
		pid, _, e := unix.RawSyscall(unix.SYS_GETPID, 0, 0, 0)
		if e == 0 && int(pid) != os.Getpid() {
			return unix.EBADE
		}
		return e
	}, succeeds, succeeds, succeeds},
	{"socket_unix", func(int) unix.Errno {
		return socketProbe(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	}, succeeds, succeeds, succeeds},
	{"socket_inet_dgram", func(int) unix.Errno {
		return socketProbe(unix.AF_INET, unix.SOCK_DGRAM, 0)
	}, succeeds, eperm, eperm},
	{"socket_inet_stream", func(int) unix.Errno {
		return socketProbe(unix.AF_INET, unix.SOCK_STREAM, 0)
	}, succeeds, eperm, succeeds},
	{"socket_netlink", func(int) unix.Errno {
		return socketProbe(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE)
	}, succeeds, eperm, eperm},
	{"ioctl_tiocsti_high_word", func(devnull int) unix.Errno {
		// The kernel reads cmd as unsigned int: this is TIOCSTI to it.
		// On /dev/null it can only fail with ENOTTY, never type anything.
		high := uint64(1) << 32
		c := byte('x')
		_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(devnull), uintptr(uint64(unix.TIOCSTI)|high), uintptr(unsafe.Pointer(&c)))
		return e
	}, notEPERM, eperm, eperm},
	{"unshare_newuser", func(int) unix.Errno {
		// Without the filter a multithreaded process gets EINVAL.
		_, _, e := unix.Syscall(unix.SYS_UNSHARE, unix.CLONE_NEWUSER, 0, 0)
		return e
	}, notEPERMSoft, eperm, eperm},
	{"io_uring_setup", func(int) unix.Errno {
		// NULL params: without the filter, EFAULT (or EPERM if the host
		// disabled io_uring).
		_, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, 0, 0)
		return e
	}, notEPERMSoft, eperm, eperm},
	{"sendto_fastopen_unix", func(int) unix.Errno {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err.(unix.Errno)
		}
		defer unix.Close(fds[0])
		defer unix.Close(fds[1])
		b := []byte{'x'}
		_, _, e := unix.Syscall6(unix.SYS_SENDTO, uintptr(fds[0]), uintptr(unsafe.Pointer(&b[0])), 1, unix.MSG_FASTOPEN|unix.MSG_DONTWAIT, 0, 0)
		return e
	}, notEPERM, eperm, eperm},
	{"setsockopt_tcp_fastopen_connect", func(int) unix.Errno {
		fd, _, e := unix.Syscall(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if e != 0 {
			return e
		}
		defer unix.Close(int(fd))
		one := int32(1)
		_, _, e = unix.Syscall6(unix.SYS_SETSOCKOPT, fd, unix.IPPROTO_TCP, unix.TCP_FASTOPEN_CONNECT, uintptr(unsafe.Pointer(&one)), 4, 0)
		return e
	}, notEPERM, unchecked, eperm},
	{"this_thread_filtered", func(int) unix.Errno {
		return seccompMode("/proc/thread-self/status", 2)
	}, unchecked, succeeds, succeeds},
	{"other_thread_unfiltered", func(int) unix.Errno {
		// Install uses no TSYNC: threads that existed before it (sysmon
		// at least) stay unfiltered.
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return unix.EIO
		}
		self := strconv.Itoa(unix.Gettid())
		for _, task := range tasks {
			if task.Name() != self && seccompMode("/proc/self/task/"+task.Name()+"/status", 0) == 0 {
				return 0
			}
		}
		return unix.ESRCH
	}, succeeds, succeeds, succeeds},
}

// seccompMode returns 0 if the "Seccomp:" field of the status file is want,
// and EINVAL otherwise.
func seccompMode(status string, want int) unix.Errno {
	b, err := os.ReadFile(status)
	if err != nil {
		return unix.EIO
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "Seccomp:"); ok && strings.TrimSpace(v) == strconv.Itoa(want) {
			return 0
		}
	}
	return unix.EINVAL
}

// socketProbe creates and closes a socket with a raw syscall on this thread.
func socketProbe(family, typ, proto int) unix.Errno {
	fd, _, e := unix.Syscall(unix.SYS_SOCKET, uintptr(family), uintptr(typ|unix.SOCK_CLOEXEC), uintptr(proto))
	if e == 0 {
		unix.Close(int(fd))
	}
	return e
}

// runChild is the child's main: it reports failures of its own setup on
// stderr with exit status 2.
func runChild(mode string) int {
	runtime.LockOSThread() // never unlocked: the thread dies with the process
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	devnull, err := unix.Open("/dev/null", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return fail(err)
	}
	if mode != modeNone {
		arch, ok := NativeArch()
		if !ok {
			return fail(errors.New("unsupported GOARCH"))
		}
		filter, err := Assemble(arch, Options{AllowInetStream: mode == modeInet})
		if err != nil {
			return fail(err)
		}
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fail(err)
		}
		if err := Install(filter); err != nil {
			return fail(err)
		}
	}
	for _, p := range kernelProbes {
		fmt.Printf("%s %d\n", p.name, int(p.call(devnull)))
	}
	return 0
}

func TestKernelFilter(t *testing.T) {
	if _, ok := NativeArch(); !ok {
		t.Skipf("no program for GOARCH %s", runtime.GOARCH)
	}
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for _, mode := range []string{modeNone, modeStrict, modeInet} {
		t.Run(mode, func(t *testing.T) {
			got := runChildProcess(t, mode)
			for _, p := range kernelProbes {
				want := map[string]expect{modeNone: p.none, modeStrict: p.strict, modeInet: p.inet}[mode]
				e, ok := got[p.name]
				if !ok {
					t.Errorf("%s: no result", p.name)
					continue
				}
				switch {
				case want == succeeds && e != 0:
					t.Errorf("%s: %v (errno %d), want success", p.name, e, int(e))
				case want == eperm && e != unix.EPERM:
					t.Errorf("%s: errno %d (%v), want EPERM", p.name, int(e), e)
				case want == notEPERM && e == unix.EPERM:
					t.Errorf("%s: EPERM without a filter", p.name)
				case want == notEPERMSoft && e == unix.EPERM:
					t.Logf("%s: EPERM without a filter (host policy?); its filtered result proves nothing here", p.name)
				}
			}
		})
	}
}

// runChildProcess runs the test binary in mode and parses its report.
func runChildProcess(t *testing.T, mode string) map[string]unix.Errno {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr // stdin: /dev/null
	if err := cmd.Run(); err != nil {
		t.Fatalf("child %s: %v\nstdout:\n%s\nstderr:\n%s", mode, err, stdout.Bytes(), stderr.Bytes())
	}
	got := map[string]unix.Errno{}
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		name, num, ok := strings.Cut(sc.Text(), " ")
		n, err := strconv.Atoi(num)
		if !ok || err != nil {
			t.Fatalf("child %s: bad line %q", mode, sc.Text())
		}
		got[name] = unix.Errno(n)
	}
	return got
}
