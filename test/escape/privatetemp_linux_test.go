//go:build linux

package escape_test

// Private temp and home, and the host's PATH (issue 9 items 1-3; issue 8
// items 2, 7 and 11): /tmp and /var/tmp are the sandbox's own, writable and
// never executable, showing only socket-free regular files of the host's
// shared temp, never a directory; HOME is a private directory, so caches
// never land in a supplied working directory; PATH is the host's, filtered;
// and a crashed moat's state is swept by the next one.

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
)

// The test binary doubles as a moat host that holds a sandbox until it is
// killed, selected by MOAT_ESCAPE_PRIVATE (see also lifecycle_linux_test.go).
func init() {
	switch os.Getenv("MOAT_ESCAPE_PRIVATE") {
	case "":
		return
	case "hold":
		privateHold()
	case "sweep":
		sb, err := moat.New(moat.Config{})
		if err != nil {
			fmt.Println("moat.New:", err)
			os.Exit(1)
		}
		sb.Close()
		fmt.Println("SWEPT")
	default:
		fmt.Fprintln(os.Stderr, "unknown MOAT_ESCAPE_PRIVATE role")
		os.Exit(2)
	}
	os.Exit(0)
}

// privateHold creates a sandbox, prints its HOME (in its state directory)
// and working directory, and waits to be killed.
func privateHold() {
	sb, err := moat.New(moat.Config{})
	if err != nil {
		fmt.Println("moat.New:", err)
		os.Exit(1)
	}
	out, err := sb.Command("/bin/sh", "-c", `echo "HOME=$HOME"`).Output()
	if err != nil {
		fmt.Println("run:", err)
		os.Exit(1)
	}
	fmt.Print(string(out))
	fmt.Println("WORKDIR=" + sb.WorkDir())
	for {
		time.Sleep(time.Hour)
	}
}

// /tmp and /var/tmp are writable inside and private: what the sandbox
// writes there never reaches the host's shared temp. The host's readable
// regular files show read-only at default (not at strict), and a write of
// the same name fails. TMPDIR is /tmp, where mktemp and tempfile work.
func TestPrivateTempWritable(t *testing.T) {
	t.Parallel()
	tag := randomHex(6)
	hostFile := filepath.Join("/tmp", "escape-pt-host-"+tag)
	plant(t, hostFile, "HOST-FILE-"+tag)
	if err := os.Chmod(hostFile, 0o644); err != nil {
		t.Fatal(err)
	}
	mustContain(t, hostSh(t, "cat "+hostFile), "HOST-FILE-"+tag) // control
	for _, l := range []struct {
		name    string
		cfg     moat.Config
		visible bool
	}{
		{"strict", moat.Config{}, false},
		{"default", levelConfig(moat.IsolationDefault, nil), true},
		{"permissive", levelConfig(moat.IsolationPermissive, nil), true},
	} {
		t.Run(l.name, func(t *testing.T) {
			t.Parallel()
			sb := newSandbox(t, l.cfg)
			for _, dir := range []string{"/tmp", "/var/tmp"} {
				name := "escape-pt-" + l.name + "-" + tag
				target := filepath.Join(dir, name)
				t.Cleanup(func() { os.Remove(target) })
				r := sh(t, sb, "echo PRIVATE-"+tag+" > "+target+" && cat "+target)
				if r.Err != nil || !strings.Contains(r.Stdout, "PRIVATE-"+tag) {
					t.Fatalf("at %s, %s is not writable inside: %s", l.name, dir, r)
				}
				if exists(target) {
					t.Errorf("at %s, a file written to %s inside appeared in the host's %s", l.name, target, dir)
				}
				// It stays for the sandbox's next command.
				mustContain(t, sh(t, sb, "cat "+target), "PRIVATE-"+tag)
			}
			r := sh(t, sb, "cat "+hostFile)
			if got := strings.Contains(r.Stdout, "HOST-FILE-"+tag); got != l.visible {
				t.Errorf("at %s, the host's %s visible = %v, want %v: %s", l.name, hostFile, got, l.visible, r)
			}
			if l.visible {
				w := sh(t, sb, "echo TAMPERED > "+hostFile)
				if w.Err == nil || strings.TrimSpace(snapshot(hostFile)) != "HOST-FILE-"+tag {
					t.Errorf("at %s, the host's shared-temp file was written: %s", l.name, w)
				}
			}
			e := sh(t, sb, `printf '%s %s %s\n' "$TMPDIR" "$TMP" "$TEMP"; f=$(mktemp) && echo "$f"; python3 -c 'import tempfile; print(tempfile.gettempdir())'`)
			lines := strings.Fields(e.Stdout)
			if e.Err != nil || len(lines) != 5 || lines[0] != "/tmp" || lines[1] != "/tmp" || lines[2] != "/tmp" || !strings.HasPrefix(lines[3], "/tmp/") || lines[4] != "/tmp" {
				t.Errorf("at %s, TMPDIR, TMP, TEMP, mktemp and tempfile should all be /tmp: %s", l.name, e)
			}
		})
	}
}

// Nothing written to /tmp or /var/tmp can be executed: by exec, the
// dynamic loader or dlopen. Control: the same probe runs its payload in a
// directory granted rwx.
func TestPrivateTempNoExec(t *testing.T) {
	t.Parallel()
	need(t, "gcc", "python3")
	granted := plantHomeDir(t, ".moat-pt-rwx-"+randomHex(4))
	cfg := levelConfig(moat.IsolationDefault, nil)
	cfg.Grant(resolvedPath(t, granted), moat.WRITE|moat.EXEC)
	sb := newSandbox(t, cfg)
	for _, p := range execProbes {
		for _, dir := range []string{"/tmp", "/var/tmp"} {
			t.Run(dir+"/"+p.name, func(t *testing.T) {
				t.Parallel()
				d := filepath.Join(dir, "x-"+strings.ReplaceAll(p.name, " ", "-"))
				r := shEnv(t, sb, []string{"D=" + d}, `mkdir -p "$D" && `+p.script)
				if !stdoutLine(r, "CREATED") {
					t.Fatalf("could not write the payload into %s, so the probe proves nothing: %s", dir, r)
				}
				if stdoutLine(r, "EXECUTED") {
					t.Fatalf("a payload written into the private %s ran: %s", dir, r)
				}
			})
		}
		t.Run("control rwx grant/"+p.name, func(t *testing.T) {
			t.Parallel()
			d := filepath.Join(granted, strings.ReplaceAll(p.name, " ", "-"))
			r := shEnv(t, sb, []string{"D=" + d}, `mkdir -p "$D" && `+p.script)
			if !stdoutLine(r, "CREATED") || !stdoutLine(r, "EXECUTED") {
				t.Fatalf("control: the payload did not run from an rwx grant: %s", r)
			}
		})
	}
}

// A directory in the host's /tmp is never visible, however empty: a Unix
// socket created in it after the sandbox's first command (tmux, an agent)
// stays out of reach, at any depth. A file only its owner may read is left
// out too. Control: the host connects to the socket; a world-readable file
// next to them is visible.
func TestPrivateTempHostDirsHidden(t *testing.T) {
	t.Parallel()
	tag := randomHex(6)
	top := filepath.Join("/tmp", "escape-pt-dir-"+tag)
	nested := filepath.Join(top, "a", "b")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(top) })
	plant(t, filepath.Join(top, "note.txt"), "DIR-FILE-"+tag)
	private := filepath.Join("/tmp", "escape-pt-0600-"+tag)
	plant(t, private, "PRIVATE-FILE-"+tag)
	if err := os.Chmod(private, 0o600); err != nil {
		t.Fatal(err)
	}
	public := filepath.Join("/tmp", "escape-pt-0644-"+tag)
	plant(t, public, "PUBLIC-FILE-"+tag)
	if err := os.Chmod(public, 0o644); err != nil {
		t.Fatal(err)
	}
	sb := newSandbox(t, levelConfig(moat.IsolationDefault, nil))
	if ls := sh(t, sb, "ls -a /tmp"); ls.Err != nil || strings.Contains(ls.Stdout, "escape-pt-dir-"+tag) || !strings.Contains(ls.Stdout, "escape-pt-0644-"+tag) {
		t.Errorf("ls /tmp should show the world-readable file and not the host's directory: %s", ls)
	}
	first := sh(t, sb, "cat "+filepath.Join(top, "note.txt")+" "+private+" "+public)
	mustNotContain(t, first, "DIR-FILE-"+tag)
	mustNotContain(t, first, "PRIVATE-FILE-"+tag)
	mustContain(t, first, "PUBLIC-FILE-"+tag) // control: files do show
	for _, dir := range []string{top, nested} {
		sock := filepath.Join(dir, "late.sock")
		ln, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		serveReply(t, ln, "LATE-SOCKET-"+tag)
		probe := `import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1]); print(s.recv(100).decode())
except OSError as e:
    print("refused", e)`
		h := onHost(t, "python3", "-c", probe, sock)
		mustContain(t, h, "LATE-SOCKET-"+tag) // control
		r := inSandbox(t, sb, "python3", "-c", probe, sock)
		mustNotContain(t, r, "LATE-SOCKET-"+tag)
	}
}

// Another sandbox's supplied working directory in /tmp, a 0700 directory
// whatever its name, is unreadable at default. Control: the host reads it.
func TestPrivateTempOtherWorkDir(t *testing.T) {
	t.Parallel()
	tag := randomHex(6)
	wd := filepath.Join("/tmp", "escape-pt-proj-"+tag)
	if err := os.Mkdir(wd, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(wd) })
	other := newSandbox(t, moat.Config{WorkDir: wd})
	if r := sh(t, other, "echo OTHER-WORK-"+tag+" > work.txt"); r.Err != nil {
		t.Fatalf("the other sandbox cannot write its working directory: %s", r)
	}
	probe := "cat " + filepath.Join(wd, "work.txt") + "; ls " + wd
	mustContain(t, hostSh(t, probe), "OTHER-WORK-"+tag) // control
	r := sh(t, newSandbox(t, levelConfig(moat.IsolationDefault, nil)), probe)
	mustNotContain(t, r, "OTHER-WORK-"+tag)
	if strings.Contains(r.Stdout, "work.txt") {
		t.Errorf("the other sandbox's working directory could be listed: %s", r)
	}
}

// HOME is a private directory, never the working directory, so tools'
// caches never land in a supplied project: go's build cache, pip, and what
// a program writes under ~/.cache. Control: the cache does exist, in HOME.
func TestPrivateHomeKeepsCachesOut(t *testing.T) {
	t.Parallel()
	need(t, "python3")
	goBin := "/usr/local/go/bin/go"
	if _, err := os.Stat(goBin); err != nil {
		t.Fatalf("this test needs go at %s: %v", goBin, err)
	}
	wd := plantHomeDir(t, ".moat-pt-proj-"+randomHex(4))
	plant(t, filepath.Join(wd, "go.mod"), "module example.com/p\n\ngo 1.22\n")
	plant(t, filepath.Join(wd, "main.go"), "package main\n\nfunc main() { println(\"hi\") }\n")
	cfg := levelConfig(moat.IsolationDefault, nil)
	cfg.WorkDir = wd
	sb := newSandbox(t, cfg)
	r := sh(t, sb, `echo "HOME=$HOME"; `+goBin+` env GOCACHE; GOFLAGS=-buildvcs=false `+goBin+` build -o /tmp/app . && echo BUILT; python3 -m pip --version >/dev/null 2>&1; mkdir -p ~/.cache/escape && echo CACHED > ~/.cache/escape/f && cat ~/.cache/escape/f`)
	if r.Err != nil || !strings.Contains(r.Stdout, "BUILT") || !strings.Contains(r.Stdout, "CACHED") {
		t.Fatalf("go build or writing the home failed: %s", r)
	}
	home := ""
	for _, l := range strings.Split(r.Stdout, "\n") {
		if v, ok := strings.CutPrefix(l, "HOME="); ok {
			home = v
		}
	}
	if home == "" || home == wd || strings.HasPrefix(home, wd+"/") {
		t.Fatalf("HOME %q is the working directory or inside it", home)
	}
	mustContain(t, r, filepath.Join(home, ".cache", "go-build"))
	entries, _ := os.ReadDir(wd)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "go.mod main.go" {
		t.Errorf("the working directory holds %q after the run, want only go.mod and main.go", names)
	}
}

// PATH is the host's, filtered: /usr/local/go/bin stays ahead of /usr/bin,
// an entry in the working directory and one that does not exist are
// dropped, and go resolves to the same file inside as on the host.
// Control: on the host, the working directory's entry finds the planted
// tool first.
func TestPrivatePathFiltered(t *testing.T) {
	if _, err := os.Stat("/usr/local/go/bin/go"); err != nil {
		t.Fatalf("this test needs go in /usr/local/go/bin: %v", err)
	}
	wd := plantHomeDir(t, ".moat-pt-path-"+randomHex(4))
	bin := filepath.Join(wd, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	plant(t, filepath.Join(bin, "go"), "#!/bin/sh\necho PLANTED-GO\n")
	if err := os.Chmod(filepath.Join(bin, "go"), 0o755); err != nil {
		t.Fatal(err)
	}
	hostPath := bin + ":/usr/local/go/bin:/nonexistent-moat-path:/usr/bin:/bin"
	mustContain(t, toResult(func() (string, string, error) {
		c := exec.Command("/bin/sh", "-c", "go")
		c.Env = []string{"PATH=" + hostPath}
		out, err := c.CombinedOutput()
		return string(out), "", err
	}()), "PLANTED-GO") // control
	t.Setenv("PATH", hostPath)
	cfg := levelConfig(moat.IsolationDefault, nil)
	cfg.WorkDir = wd
	cfg.AllowHomeWorkDir = true // it holds a directory of PATH, on purpose
	sb := newSandbox(t, cfg)
	r := sh(t, sb, `printf '%s\n' "$PATH"; command -v go`)
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if len(lines) != 2 || lines[0] != "/usr/local/go/bin:/usr/bin:/bin" || lines[1] != "/usr/local/go/bin/go" {
		t.Errorf("want PATH /usr/local/go/bin:/usr/bin:/bin and go from /usr/local/go/bin: %s", r)
	}
	// Config.Env.Set still sets PATH outright.
	cfg = moat.Config{Env: moat.Env{Set: []string{"PATH=/bin"}}}
	mustContain(t, sh(t, newSandbox(t, cfg), `printf 'P=%s\n' "$PATH"`), "P=/bin\n")
}

// A moat killed before Close leaves its state directory (private temp and
// home) and automatic working directory; the next moat sweeps them, and
// leaves a live moat's alone. Control: the killed one's are there until
// the sweep.
func TestPrivateStateSwept(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	type held struct {
		cmd            *exec.Cmd
		state, workDir string
	}
	// Temporary and state directories of their own: another test's moat
	// sweeps the dead runs it finds in the shared ones, this test's dead
	// one too, before this test's own sweep could.
	stateHome, tmp := t.TempDir(), t.TempDir()
	hold := func() held {
		c := exec.Command(self, "-test.run=^$")
		c.Env = append(os.Environ(), "MOAT_ESCAPE_PRIVATE=hold", "XDG_STATE_HOME="+stateHome, "TMPDIR="+tmp)
		out, err := c.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		h := held{cmd: c}
		t.Cleanup(func() {
			c.Process.Kill()
			c.Wait()
			if h.state != "" {
				os.RemoveAll(h.state)
				os.RemoveAll(h.workDir)
			}
		})
		sc := bufio.NewScanner(out)
		for (h.state == "" || h.workDir == "") && sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "HOME="); ok {
				h.state = filepath.Dir(v)
			}
			if v, ok := strings.CutPrefix(line, "WORKDIR="); ok {
				h.workDir = v
			}
		}
		if h.state == "" || h.workDir == "" || !strings.Contains(filepath.Base(h.state), "-state-") {
			t.Fatalf("the holding moat did not report its state directory and working directory: %q %q", h.state, h.workDir)
		}
		return h
	}
	dead, live := hold(), hold()
	if err := dead.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	dead.cmd.Wait()
	time.Sleep(200 * time.Millisecond) // its zygote follows it
	for _, p := range []string{dead.state, dead.workDir} {
		if !exists(p) {
			t.Fatalf("control: %s is gone before any sweep", p)
		}
	}
	sw := exec.Command(self, "-test.run=^$")
	sw.Env = append(os.Environ(), "MOAT_ESCAPE_PRIVATE=sweep", "XDG_STATE_HOME="+stateHome, "TMPDIR="+tmp)
	if out, err := sw.CombinedOutput(); err != nil || !strings.Contains(string(out), "SWEPT") {
		t.Fatalf("the sweeping moat failed: %v: %s", err, out)
	}
	for _, p := range []string{dead.state, dead.workDir} {
		if exists(p) {
			t.Errorf("%s of a killed moat survived the next moat's sweep", p)
		}
	}
	for _, p := range []string{live.state, live.workDir} {
		if !exists(p) {
			t.Errorf("%s of a live moat was swept", p)
		}
	}
}

// A fresh private home goes with Close; a supplied one (Config.Home) is
// kept, and the next sandbox given it finds what the last one cached. It is
// still never executable.
func TestPrivateHomeKept(t *testing.T) {
	t.Parallel()
	tag := randomHex(4)
	sb, err := moat.New(moat.Config{})
	if err != nil {
		t.Fatal(err)
	}
	r := sh(t, sb, `echo "$HOME"; echo x > "$HOME/f"`)
	fresh := strings.TrimSpace(strings.Split(r.Stdout, "\n")[0])
	if r.Err != nil || !exists(filepath.Join(fresh, "f")) {
		sb.Close()
		t.Fatalf("control: the fresh home is not where HOME says: %s", r)
	}
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	if exists(fresh) || exists(filepath.Dir(fresh)) {
		t.Errorf("the fresh home %s (or its state directory) survived Close", fresh)
	}
	kept := plantHomeDir(t, ".moat-pt-home-"+tag)
	cfg := moat.Config{Home: kept}
	w := sh(t, newSandbox(t, cfg), `mkdir -p ~/.cache/escape && echo CACHED-`+tag+` > ~/.cache/escape/f && cp /bin/echo ~/t && ~/t EXECUTED`)
	if stdoutLine(w, "EXECUTED") {
		t.Errorf("a program copied into the kept home ran: %s", w)
	}
	mustContain(t, sh(t, newSandbox(t, cfg), `echo "$HOME"; cat ~/.cache/escape/f`), "CACHED-"+tag)
	if !exists(filepath.Join(kept, ".cache", "escape", "f")) {
		t.Errorf("the kept home lost the cache")
	}
	// The user's real home is refused, naming the setting: the library
	// by its Config field, with its id as data for the CLI's flag.
	var se *moat.SettingError
	if _, err := moat.New(moat.Config{Home: home(t)}); err == nil || !strings.Contains(err.Error(), "Config.Home") || !errors.As(err, &se) || se.Setting != "home" {
		t.Errorf("Config.Home = the real home: want a *SettingError for home naming Config.Home, got %v", err)
	}
}
