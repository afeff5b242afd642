package moattest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// noUserNSEnv marks a test binary re-executed by WithoutUserNamespaces; its
// value is the name of the one test that child runs under the filter.
const noUserNSEnv = "MOAT_TEST_WITHOUT_USERNS"

// noUserNSMarker is logged by the child once the filter is in place and
// checked, so the parent knows the body really ran without namespaces.
const noUserNSMarker = "moattest: this process cannot create user namespaces"

// WithoutUserNamespaces runs body on a host that refuses user namespaces
// for real, the way a container under Docker's default seccomp profile
// does: clone and unshare with CLONE_NEWUSER fail with EPERM, and clone3,
// whose flags a filter cannot read, fails with ENOSYS.
//
// Called in a test (or subtest) as usual, it re-executes the test binary
// with -test.run selecting just that test, marked by an environment
// variable. The parent first checks that `unshare -U true` works here,
// the positive control, then waits for the child and reports its result:
// it fails when the child failed or did not run the body, skips when the
// child skipped, and logs the child's output either way. In the child the
// whole process is put under the filter, with no_new_privs, before body
// runs, and it checks that `unshare -U true` now fails; moat then meets
// the refusal when it starts its helper and carries on without
// namespaces, as on such a host.
//
// Everything the test does before the call runs again in the child; body
// runs only there.
func WithoutUserNamespaces(t *testing.T, body func(t *testing.T)) {
	t.Helper()
	if want, ok := os.LookupEnv(noUserNSEnv); ok {
		if want != t.Name() {
			t.Fatalf("moattest: this child runs %q without user namespaces, not %q", want, t.Name())
		}
		if err := refuseUserNamespaces(); err != nil {
			t.Fatalf("moattest: %v", err)
		}
		probe := exec.Command("unshare", "-U", "true")
		probe.Env = append(os.Environ(), "LC_ALL=C") // the message below, untranslated
		out, err := probe.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "Operation not permitted") {
			t.Fatalf("moattest: unshare -U true is not refused with EPERM under the filter: %v: %s", err, out)
		}
		status, err := os.ReadFile("/proc/self/status")
		if err != nil || !strings.Contains(string(status), "\nNoNewPrivs:\t1\n") || !strings.Contains(string(status), "\nSeccomp:\t2\n") {
			t.Fatalf("moattest: the child is not filtered with no_new_privs (%v):\n%s", err, status)
		}
		t.Logf("%s (unshare -U true: %s)", noUserNSMarker, strings.TrimSpace(string(out)))
		body(t)
		return
	}

	// The positive control: here, without the filter, the same probe works.
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Fatal("moattest: unshare (util-linux) is not installed; ./test.sh installs it")
	}
	if out, err := exec.Command("unshare", "-U", "true").CombinedOutput(); err != nil {
		t.Fatalf("moattest: control: unshare -U true fails without the filter too, so a refusal in the child would prove nothing: %v: %s", err, out)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("moattest: finding the test binary: %v", err)
	}
	ctx := context.Background()
	args := []string{"-test.run", runPattern(t.Name()), "-test.v", "-test.count=1"}
	if d, ok := t.Deadline(); ok {
		left := time.Until(d) - 5*time.Second
		if left <= 0 {
			t.Fatal("moattest: no time left to run the child")
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, left)
		defer cancel()
		args = append(args, "-test.timeout", left.String())
	}
	c := exec.CommandContext(ctx, exe, args...)
	c.Env = append(os.Environ(), noUserNSEnv+"="+t.Name())
	out, err := c.CombinedOutput()
	t.Logf("child without user namespaces (%s %s):\n%s", exe, strings.Join(args, " "), out)
	s := string(out)
	switch {
	case err != nil:
		t.Fatalf("the test failed without user namespaces: %v", err)
	case !strings.Contains(s, noUserNSMarker):
		t.Fatal("the child never reached the body under the filter")
	case strings.Contains(s, "--- SKIP: "+t.Name()+" ("):
		t.Skip("SKIPPED, NOT PASSED: the child skipped; see its output above")
	case !strings.Contains(s, "--- PASS: "+t.Name()+" ("):
		t.Fatal("the child did not report this test as passed")
	}
}

// runPattern is a -test.run pattern selecting exactly the test named name
// (t.Name(): levels separated by "/").
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

var (
	refuseOnce sync.Once
	refuseErr  error
)

// refuseUserNamespaces puts every thread of this process under the filter
// of WithoutUserNamespaces, with no_new_privs. Threads and processes
// started afterwards inherit it.
func refuseUserNamespaces() error {
	refuseOnce.Do(func() { refuseErr = installNoUserNS() })
	return refuseErr
}

func installNoUserNS() error {
	prog, err := noUserNSFilter()
	if err != nil {
		return err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	// TSYNC puts the runtime's other threads under the filter too, and
	// gives them no_new_privs.
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return fmt.Errorf("installing the seccomp filter: %w", errno)
	}
	return nil
}

// noUserNSFilter is the classic BPF program of WithoutUserNamespaces for
// this architecture. Calls of another architecture's ABI pass: moat's
// helpers make none.
func noUserNSFilter() ([]unix.SockFilter, error) {
	var arch uint32
	switch runtime.GOARCH {
	case "amd64":
		arch = unix.AUDIT_ARCH_X86_64
	case "arm64":
		arch = unix.AUDIT_ARCH_AARCH64
	default:
		return nil, fmt.Errorf("no filter for %s", runtime.GOARCH)
	}
	const (
		offNr, offArch, offArg0 = 0, 4, 16 // struct seccomp_data; little-endian: the low word of args[0]
		allow                   = unix.SECCOMP_RET_ALLOW
		eperm                   = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		enosys                  = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	)
	insns := []bpf.Instruction{
		/* 0 */ bpf.LoadAbsolute{Off: offArch, Size: 4},
		/* 1 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: arch, SkipFalse: 8},
		/* 2 */ bpf.LoadAbsolute{Off: offNr, Size: 4},
		/* 3 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SYS_CLONE3, SkipFalse: 1},
		/* 4 */ bpf.RetConstant{Val: enosys},
		/* 5 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SYS_CLONE, SkipTrue: 1},
		/* 6 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SYS_UNSHARE, SkipFalse: 3},
		/* 7 */ bpf.LoadAbsolute{Off: offArg0, Size: 4},
		/* 8 */ bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: unix.CLONE_NEWUSER, SkipFalse: 1},
		/* 9 */ bpf.RetConstant{Val: eperm},
		/* 10 */ bpf.RetConstant{Val: allow},
	}
	raw, err := bpf.Assemble(insns)
	if err != nil {
		return nil, fmt.Errorf("assembling the seccomp filter: %w", err)
	}
	out := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		out[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	return out, nil
}
