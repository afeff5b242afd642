package cgroup

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// requireRoot skips real-kernel tests for non-root users.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("SKIPPING REAL-KERNEL CGROUP TEST %s: needs root (euid %d); the cgroup limits are NOT verified on this run", t.Name(), os.Geteuid())
	}
}

// newGroup creates a uniquely named group and registers its removal (and a
// check that no directory is left) with t.Cleanup, so failing tests clean
// up too.
func newGroup(t *testing.T, lim Limits) *Group {
	t.Helper()
	return newGroupIn(t, lim, nil)
}

// newGroupIn is newGroup on the discovered layout as changed by alter, to
// simulate other hosts (e.g. drop v2 to get a v1-only host).
func newGroupIn(t *testing.T, lim Limits, alter func(*layout)) *Group {
	t.Helper()
	requireRoot(t)
	name := fmt.Sprintf("moat-test-%d-%08x", os.Getpid(), rand.Uint32())
	var g *Group
	l, err := discover()
	if err == nil {
		if alter != nil {
			alter(&l)
		}
		g, err = newIn(l, name, lim)
	}
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("SKIPPING REAL-KERNEL CGROUP TEST %s: cgroups unavailable to this process: %v", t.Name(), err)
	}
	if err != nil {
		t.Fatalf("New(%q, %+v): %v", name, lim, err)
	}
	dirs := groupDirs(g)
	t.Logf("group %s: dirs %v, enforced %v", name, dirs, g.Enforced())
	t.Cleanup(func() {
		if err := g.Remove(); err != nil {
			t.Errorf("cleanup Remove: %v", err)
		}
		assertGone(t, dirs)
	})
	return g
}

func groupDirs(g *Group) []string {
	var d []string
	for _, m := range g.dirs {
		d = append(d, m.dir)
	}
	return d
}

func assertGone(t *testing.T, dirs []string) {
	t.Helper()
	for _, d := range dirs {
		if _, err := os.Stat(d); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("group directory %s still there after Remove (stat: %v)", d, err)
		}
	}
}

// gated is a child started with stdin held, so it can be put into the
// group before it does anything: each program first reads a line.
type gated struct {
	cmd            *exec.Cmd
	stdout, stderr *os.File
}

// startGated starts argv, adds it to g (if not nil) and only then releases
// it. With useFD the child is also placed into the v2 group at clone time.
func startGated(t *testing.T, g *Group, useFD bool, argv ...string) *gated {
	t.Helper()
	dir := t.TempDir()
	out, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	errf, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	// Files, not pipes: Wait must return when the child exits even if
	// grandchildren keep the output open.
	cmd.Stdout, cmd.Stderr = out, errf
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if useFD && g != nil && g.V2FD() >= 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: g.V2FD()}
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %q: %v", argv, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		out.Close()
		errf.Close()
	})
	if cmd.SysProcAttr != nil && cmd.SysProcAttr.UseCgroupFD && !g.contains(cmd.Process.Pid) {
		t.Errorf("child %d started with CgroupFD is not in the v2 group", cmd.Process.Pid)
	}
	if g != nil {
		if err := g.Add(cmd.Process.Pid); err != nil {
			t.Fatalf("Add(%d): %v", cmd.Process.Pid, err)
		}
	}
	if _, err := io.WriteString(stdin, "go\n"); err != nil {
		t.Fatalf("release child: %v", err)
	}
	stdin.Close()
	return &gated{cmd: cmd, stdout: out, stderr: errf}
}

func (c *gated) output(t *testing.T) (stdout, stderr string) {
	t.Helper()
	o, err := os.ReadFile(c.stdout.Name())
	if err != nil {
		t.Fatal(err)
	}
	e, err := os.ReadFile(c.stderr.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(o), string(e)
}

func killedBy(ps *os.ProcessState, sig syscall.Signal) bool {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}

func TestMaxProcs(t *testing.T) {
	const script = `read x; n=0; for i in $(seq 1 40); do sleep 1 & n=$((n+1)); done; echo "spawned $n"; wait`
	tests := []struct {
		name    string
		limited bool
	}{
		{"MaxProcs=8 makes fork fail", true},
		{"control without group spawns all 40", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var g *Group
			if tc.limited {
				g = newGroup(t, Limits{MaxProcs: 8})
				if g.Enforced()["pids"] == "" {
					t.Fatalf("pids not enforced: %v", g.Enforced())
				}
			}
			c := startGated(t, g, false, "sh", "-c", script)
			werr := c.cmd.Wait()
			stdout, stderr := c.output(t)
			spawned := -1
			if _, after, ok := strings.Cut(stdout, "spawned "); ok {
				spawned, _ = strconv.Atoi(strings.TrimSpace(after))
			}
			t.Logf("wait: %v; spawned %d; stderr: %q", werr, spawned, stderr)
			if tc.limited {
				forkFailed := strings.Contains(stderr, "fork") ||
					strings.Contains(stderr, "Resource temporarily unavailable") || spawned < 40
				if !forkFailed {
					t.Errorf("fork did not fail under MaxProcs=8: spawned %d, stderr %q", spawned, stderr)
				}
			} else if werr != nil || spawned != 40 {
				t.Errorf("control: wait %v, spawned %d (want 40), stderr %q", werr, spawned, stderr)
			}
		})
	}
}

// realPython returns the python3 interpreter itself (not a pyenv shim).
func realPython(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skipf("SKIPPING %s: python3 not found: %v", t.Name(), err)
	}
	out, err := exec.Command(p, "-c", "import sys; print(sys.executable)").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Skipf("SKIPPING %s: python3 does not run: %v", t.Name(), err)
	}
	return strings.TrimSpace(string(out))
}

func TestMemoryLimit(t *testing.T) {
	const prog = `import sys
sys.stdin.readline()
b = bytearray(256 << 20)
for i in range(0, len(b), 4096):
    b[i] = 1
print("ok")
`
	tests := []struct {
		name    string
		limited bool
	}{
		{"64MiB limit stops 256MiB allocation", true},
		{"control without group allocates 256MiB", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			py := realPython(t)
			var g *Group
			if tc.limited {
				g = newGroup(t, Limits{MemoryBytes: 64 << 20})
				if g.Enforced()["memory"] == "" {
					t.Fatalf("memory not enforced: %v", g.Enforced())
				}
			}
			c := startGated(t, g, false, py, "-c", prog)
			werr := c.cmd.Wait()
			stdout, stderr := c.output(t)
			t.Logf("wait: %v; stdout %q; stderr tail %q", werr, stdout, tail(stderr, 200))
			if tc.limited {
				if !killedBy(c.cmd.ProcessState, syscall.SIGKILL) && !strings.Contains(stderr, "MemoryError") {
					t.Errorf("256MiB allocation under a 64MiB limit was neither OOM-killed nor MemoryError: %v, stdout %q", werr, stdout)
				}
			} else if werr != nil || strings.TrimSpace(stdout) != "ok" {
				t.Errorf("control: wait %v, stdout %q, stderr %q", werr, stdout, stderr)
			}
		})
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// waitGone reaps pid if it is our child (or was re-parented to us as
// subreaper) and waits until kill(pid, 0) reports ESRCH.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		var ws unix.WaitStatus
		_, _ = unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		err := unix.Kill(pid, 0)
		if errors.Is(err, unix.ESRCH) {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("pid %d still exists after Kill (kill(pid,0) = %v)", pid, err)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestKill(t *testing.T) {
	tests := []struct {
		name   string
		lim    Limits
		script string
		want   int // processes to wait for before killing
		alter  func(*layout)
		how    string // expected Enforced()["kill"]; "" = whatever the host has
	}{
		{
			name:   "tree with setsid grandchild",
			script: `read x; setsid sleep 100 & sleep 100 & sh -c 'sleep 100; :' & wait`,
			want:   5,
		},
		{
			name:   "tree under pids and memory limits",
			lim:    Limits{MaxProcs: 32, MemoryBytes: 128 << 20},
			script: `read x; for i in 1 2 3 4; do setsid sh -c 'sleep 100 & sleep 100' & done; wait`,
			want:   9,
		},
		{
			name:   "v1 only: freezer then SIGKILL",
			lim:    Limits{MaxProcs: 64},
			script: `read x; setsid sleep 100 & for i in 1 2 3; do sh -c 'while :; do sleep 0.01; done' & done; wait`,
			want:   5,
			alter:  dropV2,
			how:    "v1-freezer",
		},
		{
			name:   "v1 only without freezer: SIGKILL loop",
			script: `read x; setsid sleep 100 & for i in 1 2 3; do sh -c 'while :; do sleep 0.01; done' & done; wait`,
			want:   5,
			alter: func(l *layout) {
				dropV2(l)
				delete(l.v1, "freezer")
			},
			how: "signal",
		},
	}
	// Orphans re-parent to us, so they can be reaped and kill(pid,0)
	// becomes ESRCH whatever PID 1 does about zombies.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Logf("PR_SET_CHILD_SUBREAPER: %v", err)
	}
	t.Cleanup(func() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) })
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newGroupIn(t, tc.lim, tc.alter)
			if tc.how != "" && g.Enforced()["kill"] != tc.how {
				t.Fatalf("kill via %q, want %q", g.Enforced()["kill"], tc.how)
			}
			c := startGated(t, g, true, "sh", "-c", tc.script)
			var pids []int
			for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				pids = g.members()
				if len(pids) >= tc.want {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("only %d of %d processes appeared in the group: %v", len(pids), tc.want, pids)
				}
			}
			t.Logf("members before Kill: %v (kill via %s)", pids, g.Enforced()["kill"])
			if err := g.Kill(); err != nil {
				t.Fatalf("Kill: %v", err)
			}
			_ = c.cmd.Wait()
			if !killedBy(c.cmd.ProcessState, syscall.SIGKILL) {
				t.Errorf("top process: %v, want killed by SIGKILL", c.cmd.ProcessState)
			}
			for _, pid := range pids {
				waitGone(t, pid)
			}
			if m := g.members(); len(m) != 0 {
				t.Errorf("group still has members after Kill: %v", m)
			}
			if err := g.Kill(); err != nil {
				t.Errorf("second Kill: %v", err)
			}
		})
	}
}

// dropV2 makes the layout look like a v1-only host.
func dropV2(l *layout) {
	if l.v2 == nil {
		return
	}
	l.v2, l.v2Controllers = nil, nil
}

func TestLimitFilesAndRemove(t *testing.T) {
	lim := Limits{MemoryBytes: 64 << 20, MaxProcs: 16, CPUQuotaPercent: 50}
	g := newGroup(t, lim)
	enf := g.Enforced()
	for _, k := range []string{"memory", "pids", "cpu", "kill"} {
		if enf[k] == "" {
			t.Errorf("Enforced()[%q] missing: %v", k, enf)
		}
	}
	tests := []struct {
		name, ctrl, v1file, v2file, want string
	}{
		{"memory", "memory", "memory.limit_in_bytes", "memory.max", "67108864"},
		{"pids", "pids", "pids.max", "pids.max", "16"},
		{"cpu quota", "cpu", "cpu.cfs_quota_us", "cpu.max", "50000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := g.ctrl[tc.ctrl]
			file := tc.v1file
			if m.v2 {
				file = tc.v2file
			}
			b, err := os.ReadFile(filepath.Join(m.dir, file))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Fields(string(b)); len(got) == 0 || got[0] != tc.want {
				t.Errorf("%s = %q, want %q", file, b, tc.want)
			}
		})
	}

	c := startGated(t, g, true, "sh", "-c", "read x; sleep 100 & sleep 100 & wait")
	// A child group made inside the sandbox's group must not block removal.
	nested := filepath.Join(g.dirs[len(g.dirs)-1].dir, "nested")
	if err := os.Mkdir(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	dirs := append(groupDirs(g), nested)
	for deadline := time.Now().Add(3 * time.Second); len(g.members()) < 3; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("children did not appear: %v", g.members())
		}
	}
	if err := g.Remove(); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	assertGone(t, dirs)
	_ = c.cmd.Wait()
	if !killedBy(c.cmd.ProcessState, syscall.SIGKILL) {
		t.Errorf("child: %v, want killed by SIGKILL", c.cmd.ProcessState)
	}
	if err := g.Remove(); err != nil {
		t.Errorf("second Remove: %v", err)
	}
	if err := g.Kill(); err != nil {
		t.Errorf("Kill after Remove: %v", err)
	}
	if err := g.Add(os.Getpid()); err == nil {
		t.Errorf("Add after Remove succeeded")
	}
	if fd := g.V2FD(); fd != -1 {
		t.Errorf("V2FD after Remove = %d, want -1", fd)
	}
	var nilGroup *Group
	if err := nilGroup.Remove(); err != nil {
		t.Errorf("nil Remove: %v", err)
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name string
		gn   string
		lim  Limits
	}{
		{"bad name", "../escape", Limits{}},
		{"empty name", "", Limits{}},
		{"negative memory", "moat-x", Limits{MemoryBytes: -1}},
		{"negative procs", "moat-x", Limits{MaxProcs: -1}},
		{"negative cpu", "moat-x", Limits{CPUQuotaPercent: -5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := New(tc.gn, tc.lim)
			if err == nil {
				g.Remove()
				t.Fatal("New succeeded")
			}
			if errors.Is(err, ErrUnavailable) || !strings.HasPrefix(err.Error(), "cgroup: ") {
				t.Errorf("error %q: want a plain error starting with \"cgroup: \"", err)
			}
		})
	}
	t.Run("duplicate name", func(t *testing.T) {
		g := newGroup(t, Limits{MaxProcs: 4})
		g2, err := New(g.name, Limits{MaxProcs: 4})
		if err == nil {
			g2.Remove()
			t.Fatal("second New with the same name succeeded")
		}
		if errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "already exists") {
			t.Errorf("error %q: want plain \"already exists\"", err)
		}
		// The failed New must not have removed the first group.
		for _, d := range groupDirs(g) {
			if _, err := os.Stat(d); err != nil {
				t.Errorf("first group's %s: %v", d, err)
			}
		}
	})
}

func TestProbe(t *testing.T) {
	requireRoot(t)
	info := Probe()
	t.Logf("Probe: %+v", info)
	if !info.Writable {
		if strings.Contains(info.Reason, "unavailable") {
			t.Skipf("SKIPPING %s: cgroups unavailable: %s", t.Name(), info.Reason)
		}
		t.Fatalf("Probe not writable as root: %s", info.Reason)
	}
	if info.Reason != "" || info.Kill == "" {
		t.Errorf("Reason %q, Kill %q", info.Reason, info.Kill)
	}
	var parents []string
	if l, err := discover(); err == nil {
		if l.v2 != nil {
			parents = append(parents, l.v2.parent)
		}
		for _, h := range l.v1 {
			parents = append(parents, h.parent)
		}
	}
	for _, p := range parents {
		left, _ := filepath.Glob(filepath.Join(p, fmt.Sprintf("moat-probe-%d-*", os.Getpid())))
		if len(left) > 0 {
			t.Errorf("Probe left %v behind", left)
		}
	}
}

// TestNewUnprivileged re-runs the test binary as nobody and expects New to
// fail with ErrUnavailable.
func TestNewUnprivileged(t *testing.T) {
	requireRoot(t)
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	// The go test build dir and t.TempDir are private (0700): copy the
	// binary to a directory nobody can enter.
	dir, err := os.MkdirTemp("", "moat-cgroup-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "cgroup.test")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Dir = "/"
	cmd.Env = append(os.Environ(), "MOAT_CGROUP_HELPER=unpriv")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if errors.Is(err, fs.ErrPermission) {
		t.Skipf("SKIPPING %s: cannot run the test binary as nobody: %v", t.Name(), err)
	}
	t.Logf("as nobody: %s", strings.TrimSpace(string(out)))
	if !strings.Contains(string(out), "RESULT unavailable") {
		t.Errorf("as nobody: want RESULT unavailable; err %v, output:\n%s", err, out)
	}
}

// TestMain runs the unprivileged helper of TestNewUnprivileged when the
// test binary is started as that helper, and the tests otherwise.
func TestMain(m *testing.M) {
	if os.Getenv("MOAT_CGROUP_HELPER") == "unpriv" {
		unprivilegedHelper()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// unprivilegedHelper tries to create a cgroup and prints what happened.
func unprivilegedHelper() {
	g, err := New(fmt.Sprintf("moat-unpriv-%d", os.Getpid()), Limits{MaxProcs: 8, MemoryBytes: 64 << 20})
	switch {
	case errors.Is(err, ErrUnavailable):
		fmt.Printf("RESULT unavailable: %v\n", err)
	case err == nil:
		g.Remove()
		fmt.Println("RESULT created")
	default:
		fmt.Printf("RESULT other: %v\n", err)
	}
}
