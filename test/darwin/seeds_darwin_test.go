//go:build darwin

package darwin

import (
	"bufio"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/moat-sandbox/moat"
)

// canonical is t.TempDir() with its links resolved (/var is /private/var).
func canonical(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// sandbox creates a sandbox, under strict enforcement unless cfg says
// otherwise, and closes it at the end.
func sandbox(t *testing.T, cfg moat.Config) *moat.Sandbox {
	t.Helper()
	sb, err := moat.New(cfg)
	if err != nil {
		t.Fatalf("moat.New: %v", err)
	}
	t.Cleanup(func() {
		if err := sb.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return sb
}

// sh runs a shell script in sb and returns its output and error.
func sh(sb *moat.Sandbox, script string) (string, error) {
	out, err := sb.Command("/bin/sh", "-c", script).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

func TestSeedM1ReadsTempWorkDirThroughCanonicalAlias(t *testing.T) {
	work := canonical(t)
	write(t, filepath.Join(work, "alias.txt"), "alias")
	sb := sandbox(t, moat.Config{WorkDir: work})
	alias := strings.TrimPrefix(work, "/private")
	if out, err := sh(sb, "cat "+strconv.Quote(alias+"/alias.txt")); err != nil || out != "alias" {
		t.Fatalf("read through %s: %q, %v", alias, out, err)
	}
}

func TestSeedM2WritesTempWorkDirThroughCanonicalAlias(t *testing.T) {
	work := canonical(t)
	sb := sandbox(t, moat.Config{WorkDir: work})
	alias := strings.TrimPrefix(work, "/private")
	if out, err := sh(sb, "echo persisted > "+strconv.Quote(alias+"/new.txt")); err != nil {
		t.Fatalf("write through %s: %q, %v", alias, out, err)
	}
	if got := read(t, filepath.Join(work, "new.txt")); got != "persisted\n" {
		t.Fatalf("host sees %q", got)
	}
}

// M3: moat keeps other temp directories unwritable below permissive
// (Heimdall allows them); permissive is the positive control.
func TestSeedM3OtherTempDirsAreNotWritable(t *testing.T) {
	other := canonical(t)
	target := strconv.Quote(other + "/f")
	sb := sandbox(t, moat.Config{})
	if out, err := sh(sb, "echo x > "+target); err == nil {
		t.Fatalf("wrote another temp directory: %q", out)
	}
	perm := sandbox(t, moat.Config{Isolation: moat.IsolationPermissive})
	if out, err := sh(perm, "echo x > "+target); err != nil {
		t.Fatalf("permissive could not write it (control): %q, %v", out, err)
	}
}

func TestSeedM4RunsIsolatedCommand(t *testing.T) {
	sb := sandbox(t, moat.Config{})
	if out, err := sh(sb, "printf isolated"); err != nil || out != "isolated" {
		t.Fatalf("%q, %v", out, err)
	}
	if r := sb.Report(); r.Platform != "darwin" {
		t.Fatalf("platform %q", r.Platform)
	}
}

// M5: the home is unreadable at strict; at default without ProtectUserHome
// its dotfiles are readable.
func TestSeedM5HomeDotfilesAtDefaultOnly(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(home, ".moat-darwin-probe")
	write(t, probe, "readable")
	t.Cleanup(func() { os.Remove(probe) })
	strict := sandbox(t, moat.Config{})
	if out, err := sh(strict, "cat "+strconv.Quote(probe)); err == nil {
		t.Fatalf("strict read the home: %q", out)
	}
	sec := moat.IsolationDefault.Security()
	sec.ProtectUserHome = false
	def := sandbox(t, moat.Config{Isolation: moat.IsolationDefault, Security: &sec})
	if out, err := sh(def, "cat "+strconv.Quote(probe)); err != nil || out != "readable" {
		t.Fatalf("default without ProtectUserHome: %q, %v", out, err)
	}
}

func TestSeedM6UnmatchedProjectFilesStayReadOnly(t *testing.T) {
	proj := canonical(t)
	write(t, filepath.Join(proj, "data.txt"), "old")
	sb := sandbox(t, moat.Config{Grants: []moat.Grant{{Path: proj, Access: moat.READ}}})
	if _, err := sh(sb, "echo new > "+strconv.Quote(proj+"/data.txt")); err == nil {
		t.Fatal("wrote a read-only grant")
	}
	if got := read(t, filepath.Join(proj, "data.txt")); got != "old" {
		t.Fatalf("host has %q", got)
	}
	if out, err := sh(sb, "cat "+strconv.Quote(proj+"/data.txt")); err != nil || out != "old" {
		t.Fatalf("read (control): %q, %v", out, err)
	}
}

func TestSeedM7WritableGrantsAllowEditsAndCreation(t *testing.T) {
	proj := canonical(t)
	sb := sandbox(t, moat.Config{Grants: []moat.Grant{{Path: proj, Access: moat.WRITE}}})
	if out, err := sh(sb, "echo edited > "+strconv.Quote(proj+"/new.txt")); err != nil {
		t.Fatalf("%q, %v", out, err)
	}
	if got := read(t, filepath.Join(proj, "new.txt")); got != "edited\n" {
		t.Fatalf("host has %q", got)
	}
}

func TestSeedM8M9DenyMasksEnvFiles(t *testing.T) {
	work := canonical(t)
	write(t, filepath.Join(work, ".env"), "SECRET=1")
	write(t, filepath.Join(work, ".env.example"), "example")
	write(t, filepath.Join(work, "packages/api/.env.local"), "SECRET=2")
	sb := sandbox(t, moat.Config{WorkDir: work, Deny: []string{filepath.Join(work, ".env"), filepath.Join(work, "packages/api/.env.local")}})
	out, _ := sh(sb, "cat .env packages/api/.env.local 2>/dev/null; printf :; cat .env.example")
	if out != ":example" {
		t.Fatalf("got %q, want %q", out, ":example")
	}
}

// M10-M12 are decided by package policy; the profile enforces what it
// resolved (see the Linux-side tests in internal/backend/darwin).

func TestSeedM13WritableWorkDirProtectsControlPaths(t *testing.T) {
	work := canonical(t)
	if out, err := exec.Command("git", "init", "-q", work).CombinedOutput(); err != nil {
		t.Fatalf("git init: %s %v", out, err)
	}
	sb := sandbox(t, moat.Config{WorkDir: work})
	out, _ := sh(sb, `echo ok > regular.txt && echo regular
echo x > .git/hooks/pre-commit 2>/dev/null || echo hook-blocked
echo x >> .git/config 2>/dev/null || echo config-blocked
git add regular.txt && git -c user.email=m@example.com -c user.name=m commit -qm x && echo committed`)
	if out != "regular\nhook-blocked\nconfig-blocked\ncommitted" {
		t.Fatalf("got %q", out)
	}
	if _, err := os.Stat(filepath.Join(work, ".git/hooks/pre-commit")); err == nil {
		t.Fatal("the hook was written")
	}
}

func TestSeedM14VirtualFilesAreRefused(t *testing.T) {
	work := canonical(t)
	_, err := moat.New(moat.Config{WorkDir: work,
		VirtualFiles: map[string]string{filepath.Join(work, "virtual.txt"): "virtual"}})
	if err == nil {
		t.Fatal("virtual files accepted on macOS")
	}
}

func TestSeedM15NetworkModesControlLoopback(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	probe := "nc -z -w 2 127.0.0.1 " + port + " && echo open || echo closed"
	none := sandbox(t, moat.Config{})
	if out, _ := sh(none, probe); out != "closed" {
		t.Fatalf("deny-all reached loopback: %q", out)
	}
	host := sandbox(t, moat.Config{Network: moat.HostNetwork()})
	if out, _ := sh(host, probe); out != "open" {
		t.Fatalf("host network did not reach loopback (control): %q", out)
	}
}

func TestSeedM16PreservesEnvStdioAndExitStatus(t *testing.T) {
	sb := sandbox(t, moat.Config{Env: moat.Env{Set: []string{"VISIBLE=1"}}})
	c := sb.Command("/bin/sh", "-c", `printf "visible:${VISIBLE:-unset}:${HIDDEN:-unset}"; echo err >&2; exit 37`)
	var stderr strings.Builder
	c.Stderr = &stderr
	out, err := c.Output()
	var ee *moat.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 37 {
		t.Fatalf("exit: %v", err)
	}
	if string(out) != "visible:1:unset" || strings.TrimSpace(stderr.String()) != "err" {
		t.Fatalf("stdout %q stderr %q", out, stderr.String())
	}
}

func TestSeedM17SignalsReachTheProcessGroup(t *testing.T) {
	for sig, code := range map[syscall.Signal]int{syscall.SIGHUP: 45, syscall.SIGINT: 46, syscall.SIGQUIT: 47, syscall.SIGTERM: 48} {
		t.Run(sig.String(), func(t *testing.T) {
			work := canonical(t)
			sb := sandbox(t, moat.Config{WorkDir: work})
			name := strings.ToUpper(strings.TrimPrefix(sig.String(), "SIG"))
			c := sb.Command("/bin/sh", "-c", `trap 'echo forwarded > marker; exit `+strconv.Itoa(code)+`' `+signalName(sig)+`; echo ready; while :; do sleep 0.1; done`)
			stdout, err := c.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "ready\n" {
				t.Fatalf("%s: got %q", name, line)
			}
			if err := syscall.Kill(-c.Process.Pid, sig); err != nil {
				t.Fatal(err)
			}
			err = c.Wait()
			var ee *moat.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != code {
				t.Fatalf("exit %v, want %d", err, code)
			}
			if got := read(t, filepath.Join(work, "marker")); got != "forwarded\n" {
				t.Fatalf("marker %q", got)
			}
		})
	}
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGHUP:
		return "HUP"
	case syscall.SIGINT:
		return "INT"
	case syscall.SIGQUIT:
		return "QUIT"
	}
	return "TERM"
}
