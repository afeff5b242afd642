package serve

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// dialEnv makes this test binary a client: it asks GET /v1/policies on
// the socket the variable names and prints "status N" or "error ...".
const dialEnv = "MOAT_SERVE_TEST_DIAL"

func TestMain(m *testing.M) {
	if sock := os.Getenv(dialEnv); sock != "" {
		c := unixClient(sock)
		c.Timeout = 10 * time.Second
		resp, err := c.Get("http://moat/v1/policies")
		if err != nil {
			fmt.Println("error", err)
			os.Exit(0)
		}
		io.Copy(io.Discard, resp.Body)
		fmt.Println("status", resp.StatusCode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// dialFrom runs this binary as a client of sock with attr.
func dialFrom(t *testing.T, sock string, attr *syscall.SysProcAttr) string {
	t.Helper()
	cmd := exec.Command("/proc/self/exe")
	cmd.Env = append(os.Environ(), dialEnv+"="+sock)
	cmd.SysProcAttr = attr
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the client: %v: %s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// A peer in another user namespace (as every sandboxed process with
// namespaces is) is refused before a request is read; the same client in
// ours is served (the control).
func TestPeerInAnotherUserNamespaceRefused(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	if got := dialFrom(t, ts.ls.Socket, nil); got != "status 200" {
		t.Fatalf("control: a client in our user namespace got %q", got)
	}
	uid, gid := os.Getuid(), os.Getgid()
	got := dialFrom(t, ts.ls.Socket, &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
	})
	if !strings.HasPrefix(got, "error") {
		t.Errorf("a client in another user namespace (same uid) got %q", got)
	}
}

// A peer of another uid is refused even where it can reach the socket;
// we are served (the control). Needs root, to be another uid.
func TestPeerOfAnotherUIDRefused(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to run a client as another uid; the unit tests run as root in CI")
	}
	ts := newTestServer(t, serverOpts{})
	// Let uid 65534 reach the socket: its directory and the test's
	// directory above it open, the socket 0777.
	dir := filepath.Dir(ts.ls.Socket)
	for _, p := range []string{filepath.Dir(dir), dir, ts.ls.Socket} {
		if err := os.Chmod(p, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	if got := dialFrom(t, ts.ls.Socket, nil); got != "status 200" {
		t.Fatalf("control: we got %q", got)
	}
	got := dialFrom(t, ts.ls.Socket, &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}})
	if !strings.HasPrefix(got, "error") {
		t.Errorf("a client of uid 65534 got %q", got)
	}
	if strings.Contains(got, "permission denied") {
		t.Errorf("uid 65534 was not refused by the peer check but by something else: %q", got)
	}
}
