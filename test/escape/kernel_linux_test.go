//go:build linux

package escape_test

// Kernel attack surface: the syscalls moat's seccomp filter refuses. Each is
// called with raw x86-64 numbers from Python ctypes and the errno printed.
// The arguments are chosen so that the host kernel, without moat, answers
// something other than EPERM (success, or EFAULT/EINVAL/EBADF/ENOENT from
// argument checks that run before any permission check): then EPERM inside
// can only come from the sandbox. Calls that need a capability the caller
// lacks are controlled by a host run inside `unshare -Urmpf`, where the
// caller is root of its own namespaces and the kernel lets them through.
//
// Not covered, because the kernel checks a capability of the initial user
// namespace before it looks at any argument, so no host control can tell
// seccomp's EPERM from the kernel's: swapon, swapoff, acct, syslog,
// vhangup. The seccomp unit tests check that the filter names them.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/moattest"
)

// kernelProbe calls every refused syscall once. argv[1] is a directory to
// mount a tmpfs on, or "" to leave that probe out (the plain host run: the
// battery may run as root, whose mount would land on the host). Every other
// call is harmless even for root: bad arguments, or undone at once.
const kernelProbe = `
target = sys.argv[1]
if target:
    os.makedirs(target, exist_ok=True)
def call(what, nr, *args):
    # call returns a function making the syscall that raises OSError on failure.
    def f():
        ctypes.set_errno(0)
        r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
        if r == -1:
            raise OSError(ctypes.get_errno(), what)
        return r
    return f
def scfd(name, nr, *args):
    r = sc(name, nr, *args)
    if r >= 0:
        os.close(r)
NOENT = b"/nonexistent-moat-probe"

# io_uring
params = ctypes.create_string_buffer(120)
scfd("io_uring_setup", 425, 1, params)
sc("io_uring_enter", 426, -1, 0, 0, 0, 0, 0)
sc("io_uring_register", 427, -1, 0, 0, 0)

# bpf, userfaultfd, perf
sc("bpf/map-create-bad-attr", 321, 0, 1, 64)
sc("bpf/bad-cmd", 321, 9999, 0, 0)
scfd("userfaultfd/user-mode-only", 323, 1)
attr = ctypes.create_string_buffer(136)
struct.pack_into("IIQ", attr, 0, 1, 136, 1)              # PERF_TYPE_SOFTWARE, size, TASK_CLOCK
struct.pack_into("Q", attr, 40, 1 | (1 << 5) | (1 << 6))  # disabled, exclude_kernel, exclude_hv
scfd("perf_event_open/self-task-clock", 298, attr, 0, -1, -1, 0)
sc("perf_event_open/null-attr", 298, 0, 0, -1, -1, 0)

# keyrings
sc("keyctl/get-user-keyring", 250, 0, -4, 0)
sc("keyctl/get-session-keyring", 250, 0, -3, 0)
sc("add_key/process-keyring", 248, b"user", b"moat-probe", b"x", 1, -2)
sc("add_key/bad-type", 248, 0, 0, 0, 0, 0)
sc("request_key/missing-key", 249, b"user", b"moat-no-such-key", 0, 0)
sc("request_key/bad-type", 249, 0, 0, 0, 0)

# mounts and filesystem views
if target:
    sc("mount/tmpfs-on-dir", 165, b"none", target.encode(), b"tmpfs", 0, 0)
sc("mount/missing-target", 165, b"none", NOENT, b"tmpfs", 0, 0)
sc("umount2/missing-target", 166, NOENT, 0)
scfd("fsopen/tmpfs", 430, b"tmpfs", 0)
sc("fspick/bad-flags", 433, -1, 0, 0xffffffff)
sc("fsconfig/bad-fd", 431, -1, 0, 0, 0, 0)
sc("fsmount/bad-fd", 432, -1, 0, 0)
sc("move_mount/bad-flags", 429, -1, 0, -1, 0, 0xffffffff)
scfd("open_tree/root", 428, -100, b"/", 0)
sc("open_tree_attr/bad-flags", 467, -1, 0, 0xffffffff, 0, 0)
sc("mount_setattr/bad-flags", 442, -1, 0, 0xffffffff, 0, 0)
sc("pivot_root/missing", 155, NOENT, NOENT)
sc("chroot/missing", 161, NOENT)
sc("name_to_handle_at/missing", 303, -100, NOENT, 0, 0, 0)
sc("open_by_handle_at/bad-handle", 304, -1, 0, 0)
scfd("fanotify_init/report-fid", 300, 0x200, 0)
sc("quotactl/bad", 179, 0, 0, 0, 0)
sc("quotactl_fd/bad-fd", 443, -1, 0, 0, 0)
sc("lookup_dcookie", 212, 0, 0, 0)

# namespaces
NS = {"user": 0x10000000, "mnt": 0x20000, "net": 0x40000000, "pid": 0x20000000,
      "ipc": 0x08000000, "uts": 0x04000000, "cgroup": 0x02000000, "time": 0x80}
for n, f in NS.items():
    if n != "user":
        forked("unshare/user+" + n, call("unshare", 272, 0x10000000 | f))
    forked("unshare/" + n, call("unshare", 272, f))
def raw_clone(flags):
    def f():
        ctypes.set_errno(0)
        r = libc.syscall(ctypes.c_long(56), ctypes.c_long(flags | 17), ctypes.c_long(0), ctypes.c_long(0), ctypes.c_long(0), ctypes.c_long(0))
        if r == 0:
            os._exit(0)
        if r < 0:
            raise OSError(ctypes.get_errno(), "clone")
        os.waitpid(r, 0)
        return "child"
    return f
probe("clone/newuser", raw_clone(0x10000000))
probe("clone/newnet", raw_clone(0x40000000))
sc("clone3/null-args", 435, 0, 0)
sc("setns/bad-fd", 308, -1, 0)

# other processes
forked("ptrace/traceme", call("ptrace", 101, 0, 0, 0, 0))
child = os.fork()
if child == 0:
    time.sleep(10)
    os._exit(0)
sc("ptrace/attach-own-child", 101, 16, child, 0, 0)
pidfd = libc.syscall(ctypes.c_long(434), ctypes.c_long(child), ctypes.c_long(0))
sc("pidfd_getfd/own-child", 438, pidfd, 0, 0)
sc("pidfd_getfd/bad-fd", 438, -1, 0, 0)
os.kill(child, 9)
os.waitpid(child, 0)
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
src = ctypes.create_string_buffer(b"moatmoat")
dst = ctypes.create_string_buffer(8)
liov = iovec(ctypes.cast(dst, ctypes.c_void_p), 8)
riov = iovec(ctypes.cast(src, ctypes.c_void_p), 8)
sc("process_vm_readv/self", 310, os.getpid(), ctypes.byref(liov), 1, ctypes.byref(riov), 1, 0)
sc("process_vm_writev/self", 311, os.getpid(), ctypes.byref(riov), 1, ctypes.byref(liov), 1, 0)
sc("personality/query", 135, 0xffffffff)
forked("personality/linux", call("personality", 135, 0))
forked("personality/read-implies-exec", call("personality", 135, 0x0400000))
forked("personality/addr-no-randomize", call("personality", 135, 0x0040000))
forked("personality/linux32+addr-no-randomize", call("personality", 135, 0x0040008))

# memfd: none at all, not even sealed against execution (PROT_EXEC mmap)
scfd("memfd_create/executable", 319, b"moat", 1)              # MFD_CLOEXEC
scfd("memfd_create/noexec-seal", 319, b"moat", 1 | 8)         # MFD_CLOEXEC|MFD_NOEXEC_SEAL

# the kernel, the machine and global state
sc("kexec_load", 246, 0, 0, 0, 0x8000)                   # invalid flags: no segments must not mean "unload"
sc("kexec_file_load", 320, -1, -1, 0, 0, 0)
sc("init_module", 175, 0, 0, 0)
sc("finit_module", 313, -1, 0, 0)
sc("delete_module", 176, 0, 0)
sc("reboot/bad-magic", 169, 0, 0, 0, 0)
sc("settimeofday/bad-ptr", 164, 1, 0)
sc("clock_settime/bad-clock", 227, 9999, 0)
sc("clock_adjtime/bad-clock", 305, 9999, 0)
tx = ctypes.create_string_buffer(256)
sc("adjtimex/read", 159, tx)
sc("iopl", 172, 0)
sc("ioperm", 173, 0, 0, 0)
sc("uselib/missing", 134, NOENT)
out("seccomp-filters", "OK " + [l.split(":")[1].strip() for l in open("/proc/self/status") if l.startswith("Seccomp_filters")][0])
`

// TestKernelSurfaceSyscalls: every syscall moat's seccomp filter refuses is
// refused with EPERM (clone3 with ENOSYS), and each probe would have gone
// further without moat.
func TestKernelSurfaceSyscalls(t *testing.T) {
	t.Parallel()
	needX86_64(t)
	needUnshare(t)
	sb := newSandbox(t, moat.Config{})
	if !sb.Report().Active("seccomp") {
		t.Fatalf("seccomp inactive under Strict enforcement:\n%s", sb.Report())
	}

	in := pyIn(t, sb, kernelProbe, "mnt-target")
	host := pyHost(t, nil, kernelProbe, "")
	capable := pyHost(t, []string{"unshare", "-Urmpf"}, kernelProbe, t.TempDir())
	inM, hostM, capM := probes(in), probes(host), probes(capable)
	t.Logf("sandbox:\n%s%s\nhost:\n%s\nhost in unshare -Urmpf:\n%s", in.Stdout, in.Stderr, host.Stdout, capable.Stdout)

	const (
		plain = iota // control: the host, unprivileged
		cap          // control: the host as root of its own namespaces
	)
	cases := []struct {
		name    string
		want    int  // errno inside the sandbox
		allow   bool // the call must work inside too (a usability control)
		control int  // which host run is the control
		noCtl   bool // the host kernel may answer EPERM as well (privileged and compiled in)
	}{
		{name: "io_uring_setup", want: ePERM},
		{name: "io_uring_enter", want: ePERM},
		{name: "io_uring_register", want: ePERM},
		{name: "bpf/map-create-bad-attr", want: ePERM},
		{name: "bpf/bad-cmd", want: ePERM},
		{name: "userfaultfd/user-mode-only", want: ePERM},
		{name: "perf_event_open/self-task-clock", want: ePERM},
		{name: "perf_event_open/null-attr", want: ePERM},
		{name: "keyctl/get-user-keyring", want: ePERM},
		{name: "keyctl/get-session-keyring", want: ePERM},
		{name: "add_key/process-keyring", want: ePERM},
		{name: "add_key/bad-type", want: ePERM},
		{name: "request_key/missing-key", want: ePERM},
		{name: "request_key/bad-type", want: ePERM},
		{name: "mount/tmpfs-on-dir", want: ePERM, control: cap},
		{name: "mount/missing-target", want: ePERM},
		{name: "umount2/missing-target", want: ePERM},
		{name: "fsopen/tmpfs", want: ePERM, control: cap},
		{name: "fspick/bad-flags", want: ePERM, control: cap},
		{name: "fsconfig/bad-fd", want: ePERM},
		{name: "fsmount/bad-fd", want: ePERM, control: cap},
		{name: "move_mount/bad-flags", want: ePERM, control: cap},
		{name: "open_tree/root", want: ePERM},
		{name: "open_tree_attr/bad-flags", want: ePERM},
		{name: "mount_setattr/bad-flags", want: ePERM},
		{name: "pivot_root/missing", want: ePERM, control: cap},
		{name: "chroot/missing", want: ePERM},
		{name: "name_to_handle_at/missing", want: ePERM},
		{name: "open_by_handle_at/bad-handle", want: ePERM},
		{name: "fanotify_init/report-fid", want: ePERM},
		{name: "quotactl/bad", want: ePERM},
		{name: "quotactl_fd/bad-fd", want: ePERM},
		{name: "lookup_dcookie", want: ePERM},
		{name: "unshare/user", want: ePERM},
		{name: "unshare/user+mnt", want: ePERM},
		{name: "unshare/user+net", want: ePERM},
		{name: "unshare/user+pid", want: ePERM},
		{name: "unshare/user+ipc", want: ePERM},
		{name: "unshare/user+uts", want: ePERM},
		{name: "unshare/user+cgroup", want: ePERM},
		{name: "unshare/user+time", want: ePERM},
		{name: "unshare/mnt", want: ePERM, control: cap},
		{name: "unshare/net", want: ePERM, control: cap},
		{name: "unshare/pid", want: ePERM, control: cap},
		{name: "unshare/ipc", want: ePERM, control: cap},
		{name: "unshare/uts", want: ePERM, control: cap},
		{name: "unshare/cgroup", want: ePERM, control: cap},
		{name: "unshare/time", want: ePERM, control: cap},
		{name: "clone/newuser", want: ePERM},
		{name: "clone/newnet", want: ePERM, control: cap},
		{name: "clone3/null-args", want: eNOSYS},
		{name: "setns/bad-fd", want: ePERM},
		{name: "ptrace/traceme", want: ePERM},
		{name: "ptrace/attach-own-child", want: ePERM},
		{name: "pidfd_getfd/own-child", want: ePERM},
		{name: "pidfd_getfd/bad-fd", want: ePERM},
		{name: "process_vm_readv/self", want: ePERM},
		{name: "process_vm_writev/self", want: ePERM},
		{name: "personality/query", allow: true},
		{name: "personality/linux", allow: true},
		{name: "personality/read-implies-exec", want: ePERM},
		{name: "personality/addr-no-randomize", want: ePERM},
		{name: "personality/linux32+addr-no-randomize", want: ePERM},
		{name: "memfd_create/executable", want: eNOSYS},
		{name: "memfd_create/noexec-seal", want: eNOSYS},
		{name: "kexec_load", want: ePERM, noCtl: true},
		{name: "kexec_file_load", want: ePERM, noCtl: true},
		{name: "init_module", want: ePERM, noCtl: true},
		{name: "finit_module", want: ePERM, noCtl: true},
		{name: "delete_module", want: ePERM, noCtl: true},
		{name: "reboot/bad-magic", want: ePERM, control: cap},
		{name: "settimeofday/bad-ptr", want: ePERM},
		{name: "clock_settime/bad-clock", want: ePERM},
		{name: "clock_adjtime/bad-clock", want: ePERM},
		{name: "adjtimex/read", want: ePERM},
		{name: "iopl", want: ePERM, noCtl: true},
		{name: "ioperm", want: ePERM, noCtl: true},
		{name: "uselib/missing", want: ePERM, noCtl: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctlMap, ctlRun := hostM, host
			if c.control == cap {
				ctlMap, ctlRun = capM, capable
			}
			ctl := verdict(t, ctlMap, c.name, ctlRun)
			got := verdict(t, inM, c.name, in)
			if c.allow {
				if !isOK(got) || !isOK(ctl) {
					t.Errorf("want OK inside and on the host, got %q inside, %q on the host", got, ctl)
				}
				return
			}
			if !errnoIs(got, c.want) {
				t.Errorf("sandbox: got %q, want ERRNO %d", got, c.want)
			}
			if errnoIs(ctl, c.want) {
				if c.noCtl {
					t.Skipf("host kernel answers %q as well (privileged and compiled in), so there is no control here; sandbox: %q", ctl, got)
				}
				t.Errorf("control: the host answers %q too, so the probe proves nothing", ctl)
			}
		})
	}

	t.Run("seccomp-filter-installed", func(t *testing.T) {
		got, ctl := verdict(t, inM, "seccomp-filters", in), verdict(t, hostM, "seccomp-filters", host)
		n, _ := strconv.Atoi(strings.TrimPrefix(got, "OK "))
		h, _ := strconv.Atoi(strings.TrimPrefix(ctl, "OK "))
		if n <= h {
			t.Errorf("Seccomp_filters: sandbox %d, host %d: the sandbox has no filter of its own", n, h)
		}
	})
}

// TestKernelUnshareTool: the unshare(1) tool cannot build a user and mount
// namespace to mount a tmpfs, as it can on the host.
func TestKernelUnshareTool(t *testing.T) {
	t.Parallel()
	needUnshare(t)
	sb := newSandbox(t, moat.Config{})
	for _, tc := range []struct{ name, script string }{
		{"unshare-Ur", "unshare -Ur id -u && echo ESCAPED"},
		{"unshare-Urm-mount-tmpfs", "mkdir -p mnt && unshare -Urm sh -c 'mount -t tmpfs none mnt && echo ESCAPED'"},
		{"unshare-Urn", "unshare -Urn true && echo ESCAPED"},
		{"unshare-Urpf", "unshare -Urpf true && echo ESCAPED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := sh(t, sb, tc.script)
			mustNotContain(t, in, "ESCAPED")
			if in.Code == 0 {
				t.Fatalf("unshare succeeded in the sandbox: %s", in)
			}
			dir := t.TempDir()
			host := onHost(t, "/bin/sh", "-c", "cd "+dir+" && "+tc.script)
			mustContain(t, host, "ESCAPED")
		})
	}
}

// int80Source calls getpid through the i386 int $0x80 gate: a syscall of a
// foreign ABI, which moat's filter, checking the audit arch, must kill.
const int80Source = `
#include <stdio.h>
#include <unistd.h>
int main(void) {
	long r;
	__asm__ volatile ("int $0x80" : "=a"(r) : "a"(20L) : "memory");
	printf("int80-getpid=%ld pid=%ld\n", r, (long)getpid());
	return 0;
}
`

// TestKernelForeignArchSyscall: a syscall through the 32-bit gate kills the
// sandboxed process with SIGSYS; on the host it returns normally.
func TestKernelForeignArchSyscall(t *testing.T) {
	t.Parallel()
	needX86_64(t)
	need(t, "gcc")
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "int80.c")
	bin := filepath.Join(dir, "int80")
	if err := moattest.WriteFile(src, []byte(int80Source), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-O0", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}

	// Not onHost: on a host without ia32 emulation the control dies by a
	// signal, which must give a loud skip, not a harness failure.
	hostOut, err := exec.Command(bin).CombinedOutput()
	if err != nil || !strings.Contains(string(hostOut), "int80-getpid=") {
		t.Skipf("host cannot make i386 syscalls (ia32 emulation off?), so there is no control: %v %q", err, hostOut)
	}
	var hostRet, hostPid int
	if _, err := fmt.Sscanf(strings.TrimSpace(string(hostOut)), "int80-getpid=%d pid=%d", &hostRet, &hostPid); err != nil || hostRet != hostPid {
		t.Skipf("host's int $0x80 getpid did not return its pid, so there is no control: %q", hostOut)
	}

	sb := newSandbox(t, moat.Config{Grants: []moat.Grant{{Path: dir, Access: moat.WRITE | moat.EXEC}}})
	c := sb.Command(bin)
	out, err := c.Output()
	if strings.Contains(string(out), "int80-getpid=") {
		t.Fatalf("the i386 syscall returned inside the sandbox: %q (err %v)", out, err)
	}
	ee, ok := err.(*moat.ExitError)
	if !ok {
		t.Fatalf("want *moat.ExitError, got %T %v (output %q)", err, err, out)
	}
	if ee.Signal() != syscall.SIGSYS || ee.StatusCode() != 128+int(syscall.SIGSYS) {
		t.Fatalf("want death by SIGSYS (status 159), got signal %v status %d: %v; stderr %q", ee.Signal(), ee.StatusCode(), err, ee.Stderr)
	}

	// Control that the sandbox can run this very binary: the same program
	// without the int $0x80 runs fine from the granted directory.
	ok2 := filepath.Join(dir, "plain")
	if out, err := exec.Command("sh", "-c", "printf '#include <stdio.h>\\nint main(void){puts(\"plain-ok\");return 0;}\\n' | gcc -x c -o "+ok2+" -").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	if r := inSandbox(t, sb, ok2); r.Err != nil || !strings.Contains(r.Stdout, "plain-ok") {
		t.Fatalf("control: a plain binary from the same WRITE|EXEC grant does not run: %s", r)
	}
}

// keyringProbe reads, searches and requests the decoy key; argv[1] is its
// serial and argv[2] its description.
const keyringProbe = `
serial, desc = int(sys.argv[1]), sys.argv[2].encode()
buf = ctypes.create_string_buffer(256)
r = sc("keyctl/read", 250, 11, serial, buf, 256)
if r > 0:
    out("payload", "OK " + buf.raw[:r].decode(errors="replace"))
sc("keyctl/describe", 250, 6, serial, ctypes.create_string_buffer(256), 256)
sc("keyctl/search-user-keyring", 250, 10, -4, b"user", desc, 0)
sc("request_key/decoy", 249, b"user", desc, 0, 0)
`

// TestKernelUserKeyringDecoy: a secret the user keeps in their kernel user
// keyring, readable by any of their processes, is out of the sandbox's reach.
func TestKernelUserKeyringDecoy(t *testing.T) {
	t.Parallel()
	needX86_64(t)
	desc := "moat-decoy-" + strconv.Itoa(os.Getpid())
	const secret = "moat-keyring-secret"
	// add_key("user", desc, secret, KEY_SPEC_USER_KEYRING), then give the
	// owner (not only possessors) every right, so that only the sandbox can
	// stand between a process of this user and the key.
	add := hostPython(t, withPy(fmt.Sprintf(`
k = sc("add_key", 248, b"user", b%q, b%q, %d, -4)
if k > 0:
    sc("setperm", 250, 5, k, 0x3f3f0000)
`, desc, secret, len(secret))))
	m := probes(add)
	v := verdict(t, m, "add_key", add)
	if !isOK(v) {
		t.Fatalf("control: cannot add a key to the host user keyring: %s", add)
	}
	serial := strings.TrimPrefix(v, "OK ")
	t.Cleanup(func() {
		// KEYCTL_INVALIDATE removes the key at once.
		r := hostPython(t, withPy(`sc("invalidate", 250, 21, `+serial+`)`))
		if !strings.Contains(r.Stdout, "invalidate: OK") {
			t.Errorf("cleanup: key %s not invalidated: %s", serial, r)
		}
	})

	sb := newSandbox(t, moat.Config{})
	in := pyIn(t, sb, keyringProbe, serial, desc)
	host := pyHost(t, nil, keyringProbe, serial, desc)
	inM, hostM := probes(in), probes(host)
	mustNotContain(t, in, secret)
	for _, name := range []string{"keyctl/read", "keyctl/describe", "keyctl/search-user-keyring", "request_key/decoy"} {
		t.Run(name, func(t *testing.T) {
			if got := verdict(t, inM, name, in); !errnoIs(got, ePERM) {
				t.Errorf("sandbox: got %q, want ERRNO %d", got, ePERM)
			}
			if ctl := verdict(t, hostM, name, host); !isOK(ctl) {
				t.Errorf("control: the host cannot do it either: %q", ctl)
			}
		})
	}
	if verdict(t, hostM, "payload", host) != "OK "+secret {
		t.Errorf("control: the host did not read the secret back: %s", host)
	}
	// The sandbox runs in a user namespace of its own; so does this
	// control, which shows the key is not kept out by that namespace: only
	// the seccomp filter stands in the way.
	needUnshare(t)
	userns := pyHost(t, []string{"unshare", "-Ur"}, keyringProbe, serial, desc)
	if v := probes(userns)["payload"]; v != "OK "+secret {
		t.Errorf("control: a process of this user in its own user namespace did not read the secret: %s", userns)
	}
}
