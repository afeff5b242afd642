package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// tmpProbe writes the private /tmp two ways (mktemp, and a fixed name)
// and lists which of moat's possible state roots the sandbox can see the
// entries of (a masked one is an empty directory) or write.
func tmpProbe(stateRoots []string) string {
	return `f=$(mktemp) && echo data > "$f" && echo MKTEMP-OK; g=$(mktemp -p /tmp) && echo data > "$g" && echo MKTEMP-TMP-OK; echo hi > /tmp/x && [ "$(cat /tmp/x)" = hi ] && echo TMPX-OK; ` +
		`for d in ` + strings.Join(stateRoots, " ") + `; do if [ -n "$(ls -A "$d" 2>/dev/null)" ]; then echo "VISIBLE $d"; fi; if touch "$d/probe" 2>/dev/null; then echo "WRITABLE $d"; fi; done; true`
}

// testUser is who the matrix runs moat as: this user, or, run as root
// as the CLI tests are, the unprivileged test user through setpriv.
type testUser struct {
	uid, gid int
	home     string
	wrapper  []string
}

func matrixUser(t *testing.T) testUser {
	t.Helper()
	name := ""
	if os.Geteuid() == 0 {
		name = "moattest"
	}
	var u *user.User
	var err error
	if name != "" {
		u, err = user.Lookup(name)
	} else {
		u, err = user.Current()
	}
	if err != nil {
		t.Fatalf("the test user: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	tu := testUser{uid: uid, gid: gid, home: u.HomeDir}
	if name != "" {
		tu.wrapper = []string{"setpriv", "--reuid=" + u.Uid, "--regid=" + u.Gid, "--init-groups"}
	}
	return tu
}

// own gives path, and what is below it, to the test user.
func (u testUser) own(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	_ = filepath.Walk(path, func(p string, _ os.FileInfo, err error) error {
		if err == nil {
			err = os.Lchown(p, u.uid, u.gid)
		}
		if err != nil {
			t.Fatal(err)
		}
		return nil
	})
}

// moatStateRoots are every place moat may keep its state root for the
// user, old ones included: none may be visible in a sandbox.
func moatStateRoots(uid int, homes ...string) []string {
	out := []string{
		filepath.Join(os.TempDir(), "moat-state-"+strconv.Itoa(uid)), // where it fell back before
		"/tmp/moat-state-" + strconv.Itoa(uid),
		"/var/tmp/moat-state-" + strconv.Itoa(uid),
		"/run/user/" + strconv.Itoa(uid) + "/moat-state",
	}
	for _, h := range homes {
		if h != "" {
			out = append(out, filepath.Join(h, ".local", "state", "moat"))
		}
	}
	return out
}

// runMoatEnv runs the moat binary in dir with exactly env, stdin given.
func runMoatEnv(t *testing.T, u testUser, dir string, env []string, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	argv := append(append(append([]string(nil), u.wrapper...), moatBin), args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = strings.NewReader(stdin)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	r := result{stdout: so.String(), stderr: se.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

// Workload "/tmp is unwritable, silently": the private /tmp is writable
// whatever lies under the host's /tmp and whatever HOME is. The matrix:
// the cwd under the host's /tmp, under the home, and elsewhere (/var/tmp,
// itself a private temp inside, and /dev/shm); HOME set, unset, naming a
// missing directory, and naming an unreadable one; and moat run (with a
// fresh working directory and with --workdir .), and moat
// exec with a deny pattern, a denied literal, a writable pattern and a
// virtual file, and the permissive level. In each cell mktemp and writing /tmp/x succeed, and none
// of moat's state roots is visible or writable in the sandbox. Controls:
// the same probe, with the host's /tmp granted read-only, reports both
// writes failing; run on the host, it reports the state root visible.
func TestPrivateTmpMatrix(t *testing.T) {
	requireSandbox(t)
	u := matrixUser(t)
	realHome := u.home
	unreadable, err := os.MkdirTemp("/var/tmp", "moat-unreadable-home-")
	if err != nil {
		t.Fatal(err)
	}
	u.own(t, unreadable)
	t.Cleanup(func() { os.RemoveAll(unreadable) })
	if err := os.Chmod(unreadable, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(unreadable, 0o700) })
	homes := []struct {
		name string
		home *string // nil: unset
	}{
		{"HOME set", &realHome},
		{"HOME unset", nil},
		{"HOME missing", ptr("/nonexistent/moat-home")},
		{"HOME unreadable", &unreadable},
	}
	cwdParents := []struct{ name, parent string }{
		{"cwd under /tmp", "/tmp"},
		{"cwd under home", realHome},
		{"cwd under /var/tmp", "/var/tmp"},
		{"cwd elsewhere", "/dev/shm"},
	}
	modes := []struct {
		name string
		fs   string // "" is moat run
		args []string
	}{
		{"run", "", nil},
		{"run --workdir .", "", []string{"--workdir", "."}},
		{"exec deny pattern, permissive", `{"deny":["*.pem"]}`, []string{"permissive"}},
		{"exec deny pattern", `{"deny":["*.pem"]}`, nil},
		{"exec deny literal", `{"deny":["secret.txt"]}`, nil},
		{"exec writable", `{"writable":["out"],"deny":["*.key"]}`, nil},
		{"exec virtual over a host file", `{"virtual":{"/etc/hostname":"v"},"deny":["*.pem"]}`, nil},
		{"exec virtual in /tmp", `{"virtual":{"/tmp/moat-virtual":"v"},"deny":["*.pem"]}`, nil},
	}
	roots := moatStateRoots(u.uid, realHome)
	probe := tmpProbe(roots)
	baseEnv := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "USER=moat-matrix"}
	for _, cp := range cwdParents {
		if fi, err := os.Stat(cp.parent); err != nil || !fi.IsDir() {
			t.Fatalf("%s: %s is not a directory: %v", cp.name, cp.parent, err)
		}
		cwd, err := os.MkdirTemp(cp.parent, "moat-tmpmatrix-")
		if err != nil {
			t.Fatalf("%s: %v", cp.name, err)
		}
		t.Cleanup(func() { os.RemoveAll(cwd) })
		for _, f := range []string{"secret.txt", "key.pem"} {
			if err := os.WriteFile(filepath.Join(cwd, f), []byte("s"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Mkdir(filepath.Join(cwd, "out"), 0o700); err != nil {
			t.Fatal(err)
		}
		u.own(t, cwd)
		for _, h := range homes {
			env := append([]string(nil), baseEnv...)
			if h.home != nil {
				env = append(env, "HOME="+*h.home)
			}
			for _, m := range modes {
				if len(m.args) > 0 && m.args[0] == "--workdir" && strings.HasPrefix(cwd, "/dev/") {
					// Not a cell: moat refuses a working directory in /dev
					// (a kernel file system) by design.
					continue
				}
				t.Run(cp.name+"/"+h.name+"/"+m.name, func(t *testing.T) {
					var r result
					if m.fs == "" {
						args := append(append([]string{"run"}, m.args...), "--", "sh", "-c", probe)
						r = runMoatEnv(t, u, cwd, env, "", args...)
					} else {
						isolation := ""
						if len(m.args) > 0 {
							isolation = fmt.Sprintf(`"isolation":%q,`, m.args[0])
						}
						doc := fmt.Sprintf(`{"command":["sh","-c",%q],%s"filesystem":%s}`, probe, isolation, m.fs)
						r = runMoatEnv(t, u, cwd, env, doc, "exec", "--policy", "-")
					}
					if r.code != 0 || !strings.Contains(r.stdout, "MKTEMP-OK") || !strings.Contains(r.stdout, "MKTEMP-TMP-OK") || !strings.Contains(r.stdout, "TMPX-OK") {
						t.Fatalf("the private /tmp is not writable: code %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
					}
					if strings.Contains(r.stdout, "VISIBLE") || strings.Contains(r.stdout, "WRITABLE") {
						t.Fatalf("a state root is reachable in the sandbox:\n%s", r.stdout)
					}
				})
			}
		}
	}
	// Controls: the probe sees an unwritable /tmp, and a visible state
	// root, when they are so.
	t.Run("control: the host's /tmp granted read-only", func(t *testing.T) {
		r := runMoatEnv(t, u, "/", append(baseEnv, "HOME="+realHome), "", "run", "--grant", "/tmp=r", "--", "sh", "-c", probe)
		if strings.Contains(r.stdout, "MKTEMP-TMP-OK") || strings.Contains(r.stdout, "TMPX-OK") {
			t.Fatalf("the probe wrote a read-only /tmp:\n%s", r.stdout)
		}
	})
	t.Run("control: the probe on the host sees a state root", func(t *testing.T) {
		root := filepath.Join(realHome, ".local", "state", "moat")
		if _, err := os.Stat(root); err != nil {
			t.Fatalf("the state root %s was not made by the matrix: %v", root, err)
		}
		marker := filepath.Join(root, "matrix-control")
		if err := os.WriteFile(marker, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		u.own(t, marker)
		t.Cleanup(func() { os.Remove(marker) })
		// A grant of the state root is refused (TestStateDirectoryPlacesRefused),
		// so the control runs the probe on the host, as the user.
		// Only the probe's listing: its writes would leave files in the
		// host's /tmp that every later sandbox shows read-only.
		look := `if [ -n "$(ls -A "$1" 2>/dev/null)" ]; then echo "VISIBLE $1"; fi`
		argv := append(append([]string(nil), u.wrapper...), "sh", "-c", look, "sh", root)
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir, cmd.Env = "/", append(baseEnv, "HOME="+realHome)
		out, _ := cmd.Output()
		if !strings.Contains(string(out), "VISIBLE "+root) {
			t.Fatalf("the probe did not see the state root on the host:\n%s", out)
		}
	})
}

func ptr(s string) *string { return &s }
