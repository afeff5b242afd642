// Package pythonclient runs the Python client's tests (test_moat_client.py)
// against a real `moat serve`, built from this tree, so that `go test ./...`
// runs them in CI. Run as root, it runs the server and the Python agent loop
// as the unprivileged test user (MOAT_TEST_USER, default moattest) when that
// user exists; otherwise as whoever runs it. No python3 is a failure.
package pythonclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// systemPath is the PATH the test user runs with when this test runs as
// root (test.sh's, for the same user).
const systemPath = "/usr/local/go/bin:/usr/local/bin:/usr/bin:/bin"

// lookPath finds an executable file named name in the directories of path.
func lookPath(name, path string) (string, error) {
	for _, d := range filepath.SplitList(path) {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o001 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found as a file others may execute", name)
}

// ready is the line `moat serve` prints when it listens.
type ready struct {
	Socket    string `json:"socket"`
	TokenFile string `json:"token_file"`
	Listen    string `json:"listen"`
	PID       int    `json:"pid"`
}

// runAs is who runs the server and the Python tests: a user to switch to
// with setpriv (when this test runs as root), or nobody (ourselves).
type runAs struct {
	name     string
	uid, gid int
	home     string
	setpriv  string
}

// command is argv as the test user, with exactly env.
func (r runAs) command(ctx context.Context, env []string, argv ...string) *exec.Cmd {
	if r.name == "" {
		c := exec.CommandContext(ctx, argv[0], argv[1:]...)
		c.Env = env
		return c
	}
	args := append([]string{"--reuid=" + r.name, "--regid=" + r.name, "--init-groups", "env", "-i"}, env...)
	c := exec.CommandContext(ctx, r.setpriv, append(args, argv...)...)
	c.Env = []string{}
	return c
}

// testUser is the unprivileged user to run as when this test runs as root.
func testUser(t *testing.T) runAs {
	if os.Geteuid() != 0 {
		return runAs{home: os.Getenv("HOME")}
	}
	name := os.Getenv("MOAT_TEST_USER")
	if name == "" {
		name = "moattest"
	}
	u, err := user.Lookup(name)
	if err != nil {
		t.Logf("running as root: there is no user %q to run the client as (%v)", name, err)
		return runAs{home: os.Getenv("HOME")}
	}
	sp, err := exec.LookPath("setpriv")
	if err != nil {
		t.Fatalf("running as root with user %q but no setpriv to switch to it: %v", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return runAs{name: name, uid: uid, gid: gid, home: u.HomeDir, setpriv: sp}
}

// capped keeps the first max bytes written to it.
type capped struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// TestPythonClient builds moat, starts `moat serve` on a socket in a fresh
// 0700 directory (and on a loopback port), and runs test_moat_client.py
// against it: the client's parsers offline, then a whole agent loop
// (files, tests run, a background loopback server queried from inside, a
// refusal read back from the run, the refusals and the report), the API's
// error paths, and the README's Python example as it is written.
func TestPythonClient(t *testing.T) {
	as := testUser(t)
	path := os.Getenv("PATH")
	if as.name != "" {
		// The test user's own PATH, as test.sh gives it: root's may hold
		// shims under /root that the user cannot run.
		path = systemPath
	}
	py, err := lookPath("python3", path)
	if err != nil {
		t.Fatalf("python3 is missing from PATH %q: the Python client's tests cannot run (install python3): %v", path, err)
	}
	if out, err := exec.Command(py, "-c", "import sys; assert sys.version_info >= (3, 9), sys.version").CombinedOutput(); err != nil {
		t.Fatalf("%s is older than Python 3.9: %v\n%s", py, err, out)
	}
	_, src, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot find this source file")
	}
	here := filepath.Dir(src)

	root, err := os.MkdirTemp("", "moat-pyclient-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	if err := os.Chmod(root, 0o755); err != nil { // the test user reaches the binary and the scripts
		t.Fatal(err)
	}
	bin := os.Getenv("MOAT_TEST_BINARY")
	if bin == "" {
		bin = filepath.Join(root, "moat")
		build := exec.Command("go", "build", "-o", bin, "github.com/moat-sandbox/moat/cmd/moat")
		build.Dir = here
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("building moat: %v\n%s", err, out)
		}
	}
	pydir := filepath.Join(root, "py")
	if err := os.Mkdir(pydir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"moat_client.py", "test_moat_client.py", "../../README.md"} {
		b, err := os.ReadFile(filepath.Join(here, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pydir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The server's own places, the test user's and nobody else's.
	private := map[string]string{}
	for _, d := range []string{"run", "state", "cache"} {
		p := filepath.Join(root, d)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if as.name != "" {
			if err := os.Chown(p, as.uid, as.gid); err != nil {
				t.Fatal(err)
			}
		}
		private[d] = p
	}
	env := []string{
		"PATH=" + path,
		"HOME=" + as.home,
		"LANG=C.UTF-8",
		"XDG_STATE_HOME=" + private["state"],
		"XDG_CACHE_HOME=" + private["cache"],
	}
	if as.name != "" {
		env = append(env, "USER="+as.name)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	sock := filepath.Join(private["run"], "serve.sock")
	srv := as.command(ctx, env, bin, "serve", "--socket", sock, "--listen", "127.0.0.1:0")
	srv.Dir = root
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &capped{max: 1 << 20}
	srv.Stderr = stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = srv.Process.Kill()
			<-exited
		}
	})
	line := make(chan string, 1)
	go func() {
		r := bufio.NewReaderSize(io.LimitReader(stdout, 1<<16), 1<<16)
		l, _ := r.ReadString('\n')
		line <- l
		_, _ = io.Copy(io.Discard, stdout)
		exited <- srv.Wait()
	}()
	var rd ready
	select {
	case l := <-line:
		if err := json.Unmarshal([]byte(l), &rd); err != nil || rd.Socket == "" {
			t.Fatalf("moat serve's ready line %q: %v\nstderr:\n%s", l, err, stderr)
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("moat serve printed no ready line in 2 minutes\nstderr:\n%s", stderr)
	}
	if rd.Socket != sock || filepath.Dir(rd.TokenFile) != filepath.Join(private["state"], "moat", "serve") || rd.Listen == "" {
		t.Fatalf("ready line %+v: want socket %q, the token in the state root's serve directory, and a loopback listener", rd, sock)
	}

	// No MOAT_SERVE_TOKEN_FILE: the client finds the token where moat
	// serve writes it for this socket.
	pyenv := append(env,
		"MOAT_SERVE_SOCKET="+rd.Socket,
		"MOAT_TEST_TOKEN_FILE="+rd.TokenFile,
		"MOAT_TEST_SERVE_URL=http://"+rd.Listen,
		"MOAT_TEST_REQUIRE_SERVER=1",
		"MOAT_TEST_README="+filepath.Join(pydir, "README.md"),
		"PYTHONDONTWRITEBYTECODE=1",
	)
	tests := as.command(ctx, pyenv, py, "-m", "unittest", "-v", "test_moat_client")
	tests.Dir = pydir
	out, err := tests.CombinedOutput()
	t.Logf("python3 -m unittest -v test_moat_client (as %s):\n%s", who(as), out)
	if err != nil {
		t.Errorf("the Python client's tests failed: %v", err)
	}
	if !strings.Contains(string(out), "\nOK") {
		t.Errorf("the Python client's tests did not end OK")
	}
	if strings.Contains(string(out), "skipped") {
		t.Errorf("a Python client test was skipped: every test must run here")
	}

	// The server stops on TERM.
	_ = srv.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		stopped = true
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Errorf("moat serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("moat serve did not stop within 30 s of SIGTERM")
	}
	if t.Failed() {
		t.Logf("moat serve's stderr:\n%s", stderr)
	}
}

func who(as runAs) string {
	if as.name == "" {
		return fmt.Sprintf("uid %d", os.Geteuid())
	}
	return as.name
}
