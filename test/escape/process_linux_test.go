//go:build linux

package escape_test

// Process probes: other processes, their memory, environment and signals,
// the caller's descriptors and terminal, and the environment the sandbox is
// given.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat"
)

// ptraceProbe attaches to pid with PTRACE_ATTACH and prints ATTACHED or the
// errno.
func ptraceProbe(pid int) string {
	return fmt.Sprintf(`
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
if libc.ptrace(16, %d, None, None) == 0:
    print("ATTACHED")
else:
    print("ptrace errno", ctypes.get_errno())
`, pid)
}

// A host process of the same user can be neither traced nor read through
// /proc. Yama is not on this kernel (no /proc/sys/kernel/yama), so the host
// control of attaching to an own process is the plain same-user rule.
func TestProcessHostProcessOpaque(t *testing.T) {
	t.Parallel()
	need(t, "python3")
	sb := newSandbox(t, moat.Config{})
	t.Run("ptrace attach", func(t *testing.T) {
		t.Parallel()
		victim := hostSleep(t)
		r := python(t, sb, ptraceProbe(victim.Process.Pid))
		t.Logf("sandbox: %s", strings.TrimSpace(r.Stdout))
		mustNotContain(t, r, "ATTACHED")
		mustContain(t, r, "ptrace errno")
		if !alive(victim.Process.Pid) {
			t.Fatalf("the host process died")
		}
		// Control: the host attaches to a process of its own.
		ctl := hostSleep(t)
		if scope, err := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope"); err == nil && strings.TrimSpace(string(scope)) != "0" {
			t.Logf("yama ptrace_scope %s: the host attach control may fail; /proc/PID/environ is the control then", scope)
			return
		}
		mustContain(t, hostPython(t, ptraceProbe(ctl.Process.Pid)), "ATTACHED")
	})
	t.Run("environ", func(t *testing.T) {
		t.Parallel()
		secret := "abc123-" + randomHex(4)
		victim := hostSleep(t, "SECRET_TOKEN="+secret)
		probe := fmt.Sprintf("cat /proc/%d/environ | tr '\\0' '\\n'; cat /proc/%d/cmdline", victim.Process.Pid, victim.Process.Pid)
		r := sh(t, sb, probe)
		mustNotContain(t, r, secret)
		mustContain(t, hostSh(t, probe), "SECRET_TOKEN="+secret) // control
	})
	t.Run("mem", func(t *testing.T) {
		t.Parallel()
		victim := hostSleep(t)
		probe := fmt.Sprintf(`
import sys
try:
    f = open("/proc/%d/mem", "rb")
    for line in open("/proc/%d/maps"):
        if "[stack]" in line:
            lo = int(line.split("-")[0], 16)
            f.seek(lo)
            print("READ", len(f.read(64)))
            break
except OSError as e:
    print("mem errno", e.errno)
`, victim.Process.Pid, victim.Process.Pid)
		r := python(t, sb, probe)
		mustNotContain(t, r, "READ")
		mustContain(t, hostPython(t, probe), "READ 64") // control
	})
}

// The sandbox cannot signal a host process, and does not kill it.
func TestProcessSignalHost(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, moat.Config{})
	victim := hostSleep(t)
	pid := strconv.Itoa(victim.Process.Pid)
	tests := []struct{ name, script string }{
		{"kill -0", "kill -0 " + pid + " && echo SIGNALLED"},
		{"kill -TERM", "kill -TERM " + pid + " && echo SIGNALLED"},
		{"kill -KILL", "kill -KILL " + pid + " && echo SIGNALLED"},
		{"python os.kill", "python3 -c 'import os; os.kill(" + pid + ", 15); print(\"SIGNALLED\")'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := sh(t, sb, tc.script)
			mustNotContain(t, r, "SIGNALLED")
			if r.Err == nil {
				t.Errorf("signalling the host process did not fail: %s", r)
			}
		})
	}
	time.Sleep(50 * time.Millisecond)
	if !alive(victim.Process.Pid) {
		t.Fatalf("the host process %s was killed from the sandbox", pid)
	}
	mustContain(t, hostSh(t, "kill -0 "+pid+" && echo SIGNALLED"), "SIGNALLED") // control
}

// E8: strace cannot run in the sandbox; on the host it can.
func TestProcessStrace(t *testing.T) {
	t.Parallel()
	need(t, "strace")
	r := sh(t, newSandbox(t, moat.Config{}), "strace -f /bin/true && echo TRACED")
	mustNotContain(t, r, "TRACED")
	if r.Err == nil {
		t.Errorf("strace succeeded: %s", r)
	}
	h := hostSh(t, "strace -f /bin/true && echo TRACED")
	if !strings.Contains(h.Stdout, "TRACED") || !strings.Contains(h.Stderr, "execve(") {
		t.Fatalf("control: strace does not work on the host: %s", h)
	}
}

// The environment of the caller, here a parent process holding a secret in
// its environment, cannot be read through /proc. Control: the parent runs
// the same script unsandboxed, and it reads the secret.
func TestProcessParentEnviron(t *testing.T) {
	t.Parallel()
	secret := "parent-secret-" + randomHex(6)
	script := `
for f in /proc/$PARENT_PID/environ /proc/1/environ /proc/$PPID/environ /proc/[0-9]*/environ; do
	cat "$f" 2>/dev/null | tr '\0' '\n'
done
echo PROBED`
	out := runParent(t, []string{"MOAT_TEST_SECRET=" + secret}, "run", script)
	sandboxed, host, ok := strings.Cut(out, "\nHOST-BEGIN\n")
	if !ok || !strings.Contains(sandboxed, "PROBED") || !strings.Contains(host, "PROBED") {
		t.Fatalf("the probes did not run: %s", out)
	}
	if strings.Contains(sandboxed, secret) {
		t.Fatalf("the sandbox read its parent's environment: %s", sandboxed)
	}
	if !strings.Contains(host, "MOAT_TEST_SECRET="+secret) {
		t.Fatalf("control: unsandboxed, the script does not find the parent's secret: %s", host)
	}
}

// runParent runs this test binary as a parent process in role with extra
// environment entries and returns its combined output.
func runParent(t *testing.T, env []string, role, script string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command(self)
	c.Env = append(append(os.Environ(), env...), "MOAT_ESCAPE_PARENT="+role, "MOAT_ESCAPE_SCRIPT="+script)
	var b bytes.Buffer
	c.Stdout, c.Stderr = &b, &b
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		_ = c.Process.Kill()
		<-done
		t.Fatalf("parent %s hung: %s", role, b.String())
	}
	return b.String()
}

// Secret variables of the caller do not reach the sandbox unless passed
// through by name.
func TestProcessSecretEnvNotPassed(t *testing.T) {
	secrets := map[string]string{
		"AWS_SECRET_ACCESS_KEY": "DECOY-AWS-" + randomHex(4),
		"GITHUB_TOKEN":          "DECOY-GH-" + randomHex(4),
		"OPENAI_API_KEY":        "DECOY-OPENAI-" + randomHex(4),
		"ANTHROPIC_API_KEY":     "DECOY-ANTHROPIC-" + randomHex(4),
		"SSH_AUTH_SOCK":         "/tmp/decoy-agent-" + randomHex(4),
		"DATABASE_URL":          "postgres://decoy:" + randomHex(4) + "@db",
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	r := inSandbox(t, newSandbox(t, moat.Config{}), "env")
	if r.Err != nil {
		t.Fatalf("env failed: %s", r)
	}
	for k, v := range secrets {
		if strings.Contains(r.Stdout, v) || strings.Contains(r.Stdout, k+"=") {
			t.Errorf("%s reached the sandbox: %s", k, r)
		}
	}
	// Control: passed through by name, GITHUB_TOKEN arrives (and only it).
	p := inSandbox(t, newSandbox(t, moat.Config{Env: moat.Env{Passthrough: []string{"GITHUB_TOKEN"}}}), "env")
	mustContain(t, p, "GITHUB_TOKEN="+secrets["GITHUB_TOKEN"])
	mustNotContain(t, p, secrets["AWS_SECRET_ACCESS_KEY"])
}

// Loader variables are stripped however they are set; I7, I8, I9: PATH and
// TMPDIR as documented.
func TestProcessEnvRules(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, moat.Config{Env: moat.Env{Set: []string{
		"LD_PRELOAD=/nonexistent-set.so", "LD_LIBRARY_PATH=/nonexistent-set", "MOAT_SET_PROBE=set-ok",
	}}})
	t.Run("LD_ stripped", func(t *testing.T) {
		t.Parallel()
		r := shEnv(t, sb, []string{"LD_PRELOAD=/nonexistent-cmd.so", "LD_AUDIT=/nonexistent-audit.so", "MOAT_CMD_PROBE=cmd-ok"}, "env")
		if r.Err != nil {
			t.Fatalf("env failed: %s", r)
		}
		mustNotContain(t, r, "LD_")
		mustNotContain(t, r, "nonexistent")
		// Control: other variables set the same two ways do arrive.
		mustContain(t, r, "MOAT_SET_PROBE=set-ok")
		mustContain(t, r, "MOAT_CMD_PROBE=cmd-ok")
	})
	t.Run("I7 default PATH", func(t *testing.T) {
		t.Parallel()
		// The host's entries that the sandbox may execute from, in order
		// (see privatetemp_linux_test.go for what is dropped).
		r := sh(t, sb, `printf '%s\n' "$PATH"`)
		got := strings.TrimSpace(r.Stdout)
		host := ":" + os.Getenv("PATH") + ":"
		last := -1
		for _, e := range strings.Split(got, ":") {
			i := strings.Index(host, ":"+e+":")
			if e == "" || i <= last {
				t.Fatalf("PATH = %q: %q is not the host's next entry (host PATH %q)", got, e, os.Getenv("PATH"))
			}
			last = i
		}
		if !strings.Contains(":"+got+":", ":/usr/bin:") {
			t.Fatalf("PATH = %q lost /usr/bin", got)
		}
	})
	t.Run("I8 PATH passthrough", func(t *testing.T) {
		t.Parallel()
		hostPath := os.Getenv("PATH")
		if hostPath == moat.DefaultPath {
			t.Fatalf("the host PATH equals moat.DefaultPath; the probe cannot tell them apart")
		}
		r := sh(t, newSandbox(t, moat.Config{Env: moat.Env{Passthrough: []string{"PATH"}}}), `printf '%s\n' "$PATH"`)
		if got := strings.TrimSpace(r.Stdout); got != hostPath {
			t.Fatalf("PATH = %q, want the host's %q", got, hostPath)
		}
	})
	t.Run("I9 Cmd.Env wins", func(t *testing.T) {
		t.Parallel()
		r := shEnv(t, sb, []string{"TMPDIR=/custom"}, `printf '%s\n' "$TMPDIR"`)
		if got := strings.TrimSpace(r.Stdout); got != "/custom" {
			t.Fatalf("TMPDIR = %q, want /custom", got)
		}
	})
}

// fdProbe tries every descriptor from 3 to 255 by reading it and by
// reopening /proc/self/fd/N, and prints what it read.
const fdProbe = `
import os, stat
for n in range(3, 256):
    try:
        if stat.S_ISREG(os.fstat(n).st_mode):
            print("fd", n, os.pread(n, 200, 0))
    except OSError:
        pass
    try:
        fd = os.open("/proc/self/fd/%d" % n, os.O_RDONLY | os.O_NONBLOCK)
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                print("reopen", n, os.read(fd, 200))
        finally:
            os.close(fd)
    except OSError:
        pass
`

// A descriptor the caller leaked (opened without O_CLOEXEC) does not reach
// the sandbox; passed in ExtraFiles, it does.
func TestProcessLeakedDescriptor(t *testing.T) {
	need(t, "python3", "bash")
	dir := t.TempDir()
	secretPath := filepath.Join(dir, "leaked-secret")
	secret := "LEAKED-FD-SECRET-" + randomHex(4)
	writeFile(t, secretPath, secret)
	// Not parallel: a descriptor without O_CLOEXEC would also leak into every
	// other test's processes while it is open.
	fd, err := syscall.Open(secretPath, syscall.O_RDONLY, 0) // no O_CLOEXEC
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC != 0 {
		t.Fatalf("the leaked descriptor %d is close-on-exec (%v)", fd, err)
	}
	sb := newSandbox(t, moat.Config{})
	r := python(t, sb, fdProbe)
	mustNotContain(t, r, secret)
	b := inSandbox(t, sb, "bash", "-c", "for n in $(seq 3 20); do timeout 5 cat <&$n; done 2>/dev/null; ls -l /proc/self/fd")
	mustNotContain(t, b, secret)
	// Control: the leak is real on the host (a plain child inherits it)...
	mustContain(t, onHost(t, "bash", "-c", fmt.Sprintf("cat <&%d", fd)), secret)
	// ...and the same probes see a descriptor passed on purpose.
	f, err := os.Open(secretPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := sb.Command("bash", "-c", "cat <&3")
	c.ExtraFiles = []*os.File{f}
	mustContain(t, runCmd(c), secret)
	c = sb.Command("python3", "-c", fdProbe)
	c.ExtraFiles = []*os.File{f}
	mustContain(t, runCmd(c), secret)
}

// tiocstiProbe pushes "x" into the terminal on fd 0 with TIOCSTI, then "y"
// with the high-bit variant of the request number that a filter comparing
// 64 bits would miss, and prints each result.
const tiocstiProbe = `
import ctypes, fcntl, termios
try:
    fcntl.ioctl(0, termios.TIOCSTI, b"x")
    print("TIOCSTI ok")
except OSError as e:
    print("TIOCSTI errno", e.errno)
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_ulong, ctypes.c_char_p]
if libc.syscall(16, 0, 0x5412 | (1 << 32), b"y") == 0:
    print("HIGH ok")
else:
    print("HIGH errno", ctypes.get_errno())
`

// A command cannot inject input into a terminal it is given, with or
// without it as its controlling terminal.
func TestProcessTIOCSTI(t *testing.T) {
	t.Parallel()
	need(t, "python3")
	legacy, _ := os.ReadFile("/proc/sys/dev/tty/legacy_tiocsti")
	sb := newSandbox(t, moat.Config{})
	for _, ctty := range []bool{false, true} {
		t.Run(fmt.Sprintf("setctty=%v", ctty), func(t *testing.T) {
			t.Parallel()
			master, slave := openPTY(t)
			c := sb.Command("python3", "-c", tiocstiProbe)
			c.Stdin = slave
			c.Setctty = ctty
			r := runCmd(c)
			echoed := drain(master, 300*time.Millisecond)
			t.Logf("sandbox: %s", strings.TrimSpace(r.Stdout))
			mustNotContain(t, r, " ok")
			mustContain(t, r, "TIOCSTI errno")
			if strings.ContainsAny(echoed, "xy") {
				t.Fatalf("input was injected into the terminal (echo %q): %s", echoed, r)
			}
		})
	}
	t.Run("control", func(t *testing.T) {
		t.Parallel()
		if strings.TrimSpace(string(legacy)) == "0" {
			t.Skipf("legacy_tiocsti is 0: the host refuses TIOCSTI to everyone, the errno check above still holds")
		}
		master, slave := openPTY(t)
		c := exec.Command("/usr/bin/python3", "-c", tiocstiProbe)
		c.Stdin = slave
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		if err := c.Run(); err != nil {
			t.Fatalf("host probe: %v: %s", err, out.String())
		}
		echoed := drain(master, 300*time.Millisecond)
		if !strings.Contains(out.String(), "TIOCSTI ok") || !strings.Contains(out.String(), "HIGH ok") || !strings.Contains(echoed, "x") {
			t.Fatalf("control: TIOCSTI should inject on the host: %s (echo %q)", out.String(), echoed)
		}
	})
}
