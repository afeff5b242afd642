//go:build darwin

package darwin

import (
	"errors"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
)

// The guarantees docs/platforms.md lists for macOS, each an attack with a
// positive control.

// childEnv makes this test binary a moat program that starts a sandboxed
// sleeper, writes its PID to the named file and waits to be killed.
const childEnv = "MOAT_DARWIN_TEST_CHILD"

func TestMain(m *testing.M) {
	if out := os.Getenv(childEnv); out != "" {
		sb, err := moat.New(moat.Config{})
		if err != nil {
			os.Exit(3)
		}
		c := sb.Command("/bin/sh", "-c", "echo $$ > "+strconv.Quote(out)+".tmp && mv "+strconv.Quote(out)+".tmp "+strconv.Quote(out)+"; exec sleep 60")
		if err := c.Start(); err != nil {
			os.Exit(4)
		}
		_ = c.Wait()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestDarwinWorkDirIsNeverExecutable(t *testing.T) {
	work := canonical(t)
	write(t, filepath.Join(work, "run.sh"), "#!/bin/sh\necho ran\n")
	os.Chmod(filepath.Join(work, "run.sh"), 0o755)
	sb := sandbox(t, moat.Config{WorkDir: work})
	if out, err := sh(sb, "./run.sh"); err == nil {
		t.Fatalf("ran a file of the working directory: %q", out)
	}
	build := sandbox(t, moat.Config{WorkDir: work, Build: true})
	if out, err := sh(build, "./run.sh"); err != nil || out != "ran" {
		t.Fatalf("build mode (control): %q, %v", out, err)
	}
}

func TestDarwinWrittenFilesAreNeverExecutable(t *testing.T) {
	sb := sandbox(t, moat.Config{})
	if out, err := sh(sb, `cp /bin/echo "$TMPDIR/e" && "$TMPDIR/e" ran`); err == nil {
		t.Fatalf("ran a copy in the private temp: %q", out)
	}
	if out, err := sh(sb, `cp /bin/echo ./e && ./e ran`); err == nil {
		t.Fatalf("ran a copy in the working directory: %q", out)
	}
	if out, err := sh(sb, `/bin/echo ran`); err != nil || out != "ran" {
		t.Fatalf("the original (control): %q, %v", out, err)
	}
}

func TestDarwinRWXGrantExecutes(t *testing.T) {
	dir := canonical(t)
	sb := sandbox(t, moat.Config{Grants: []moat.Grant{{Path: dir, Access: moat.WRITE | moat.EXEC}}})
	if out, err := sh(sb, `cp /bin/echo `+strconv.Quote(dir+"/e")+` && `+strconv.Quote(dir+"/e")+` ran`); err != nil || out != "ran" {
		t.Fatalf("rwx grant: %q, %v", out, err)
	}
	wo := sandbox(t, moat.Config{Grants: []moat.Grant{{Path: dir, Access: moat.WRITE}}})
	if out, err := sh(wo, strconv.Quote(dir+"/e")+` ran`); err == nil {
		t.Fatalf("a write-only grant ran a file: %q", out)
	}
}

func TestDarwinDeniedPathsUnderEveryName(t *testing.T) {
	dir := canonical(t)
	secret := filepath.Join(dir, "secret.txt")
	write(t, secret, "secret")
	work := canonical(t)
	sb := sandbox(t, moat.Config{WorkDir: work, Grants: []moat.Grant{{Path: dir, Access: moat.READ}}, Deny: []string{secret}})
	for _, name := range []string{secret, strings.TrimPrefix(secret, "/private"), "/System/Volumes/Data" + secret} {
		if out, err := sh(sb, "cat "+strconv.Quote(name)); err == nil {
			t.Errorf("read %s: %q", name, out)
		}
	}
	if out, err := sh(sb, "ln "+strconv.Quote(secret)+" ./link && cat ./link"); err == nil {
		t.Errorf("read through a hard link: %q", out)
	}
	if out, err := sh(sb, "cp -c "+strconv.Quote(secret)+" ./clone && cat ./clone"); err == nil {
		t.Errorf("read through a clone: %q", out)
	}
	write(t, filepath.Join(dir, "open.txt"), "open")
	if out, err := sh(sb, "cat "+strconv.Quote(filepath.Join(dir, "open.txt"))); err != nil || out != "open" {
		t.Errorf("a sibling (control): %q, %v", out, err)
	}
}

func TestDarwinProtectedHomeThroughTheDataVolume(t *testing.T) {
	home, _ := os.UserHomeDir()
	probe := filepath.Join(home, ".moat-darwin-probe2")
	write(t, probe, "x")
	t.Cleanup(func() { os.Remove(probe) })
	sb := sandbox(t, moat.Config{})
	for _, name := range []string{probe, "/System/Volumes/Data" + probe} {
		if out, err := sh(sb, "cat "+strconv.Quote(name)); err == nil {
			t.Errorf("strict read %s: %q", name, out)
		}
	}
	for _, d := range []string{"/Users", "/Volumes"} {
		if out, err := sh(sb, "ls "+d); err == nil {
			t.Errorf("strict listed %s: %q", d, out)
		}
	}
}

func TestDarwinProxyPortOnly(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	sb := sandbox(t, moat.Config{Network: moat.AllowAll()})
	u, err := url.Parse(sb.ProxyURL())
	if err != nil {
		t.Fatal(err)
	}
	other := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	if out, _ := sh(sb, "nc -z -w 2 127.0.0.1 "+other+" && echo open || echo closed"); out != "closed" {
		t.Errorf("reached another loopback port: %q", out)
	}
	if out, _ := sh(sb, "nc -z -w 2 127.0.0.1 "+u.Port()+" && echo open || echo closed"); out != "open" {
		t.Errorf("could not reach the proxy (control): %q", out)
	}
}

func TestDarwinSIGKILLOfMoatKillsTheSandbox(t *testing.T) {
	pidFile := filepath.Join(canonical(t), "pid")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(self, "-test.run", "^$")
	child.Env = append(os.Environ(), childEnv+"="+pidFile)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if b, err := os.ReadFile(pidFile); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			break
		}
	}
	if pid == 0 {
		child.Process.Kill()
		t.Fatal("the sandboxed sleeper never started")
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the sleeper is not running (control): %v", err)
	}
	child.Process.Kill()
	child.Wait()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			return
		}
	}
	syscall.Kill(pid, syscall.SIGKILL)
	t.Fatal("the sandbox outlived a SIGKILL of moat")
}

func TestDarwinRlimitsAndNice(t *testing.T) {
	sb := sandbox(t, moat.Config{Limits: moat.Limits{OpenFiles: 77, CPUSeconds: 30}, Nice: 5})
	if out, err := sh(sb, "ulimit -n; ulimit -t; ulimit -c"); err != nil || out != "77\n30\n0" {
		t.Errorf("ulimit: %q, %v", out, err)
	}
	host, _ := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
	want := strconv.Itoa(min(host+5, 20))
	if out, err := sh(sb, `perl -e 'print getpriority(0,0)'`); err != nil || out != want {
		t.Errorf("priority %q (want %s), %v", out, want, err)
	}
}

func TestDarwinHelperCannotBeChanged(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	self, _ = filepath.EvalSymlinks(self)
	sb := sandbox(t, moat.Config{Isolation: moat.IsolationPermissive})
	if out, err := sh(sb, "echo x >> "+strconv.Quote(self)); err == nil {
		t.Fatalf("appended to moat's binary: %q", out)
	}
	sib := filepath.Join(filepath.Dir(self), "moat-darwin-sibling")
	t.Cleanup(func() { os.Remove(sib) })
	if out, err := sh(sb, "echo x > "+strconv.Quote(sib)); err != nil {
		t.Fatalf("a sibling at permissive (control): %q, %v", out, err)
	}
}

func TestDarwinReport(t *testing.T) {
	sb := sandbox(t, moat.Config{})
	active := map[string]bool{}
	for _, l := range sb.Report().Layers {
		active[l.Name] = l.Active
	}
	if !active["sandbox-exec (Seatbelt)"] || !active["memory-watch"] || active["namespaces"] || active["seccomp"] {
		t.Errorf("layers %v", active)
	}
}

func TestDarwinMemoryLimitKillsTheGroup(t *testing.T) {
	// A child of the shell holds the memory, so the sum over the group
	// is what must pass the limit.
	script := `perl -e '$x = "a" x (300*1024*1024); sleep 10' & wait`
	sb := sandbox(t, moat.Config{Limits: moat.Limits{MemoryBytes: 100 << 20}})
	_, err := sh(sb, script)
	var ee *moat.ExitError
	if !errors.As(err, &ee) || !strings.Contains(ee.Reason(), "memory") {
		t.Fatalf("300 MiB under a 100 MiB limit: %v", err)
	}
	roomy := sandbox(t, moat.Config{Limits: moat.Limits{MemoryBytes: 1 << 30, Timeout: 30 * time.Second}})
	if out, err := sh(roomy, `perl -e '$x = "a" x (300*1024*1024)'`); err != nil {
		t.Fatalf("300 MiB under a 1 GiB limit (control): %q, %v", out, err)
	}
}
