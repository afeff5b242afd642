package serve

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func listenIn(t *testing.T, sock string) (*Listeners, error) {
	t.Helper()
	os.Mkdir(filepath.Join(filepath.Dir(sock), "tokens"), 0o700)
	l, err := Listen(ListenOptions{Socket: sock, Token: "t0k", TokenDir: filepath.Join(filepath.Dir(sock), "tokens")})
	if err == nil {
		t.Cleanup(func() { l.Close() })
	}
	return l, err
}

// The socket is 0600, the token file 0600 beside it, and Close removes
// both.
func TestListenFilesAndClose(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s.sock")
	l, err := listenIn(t, sock)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{l.Socket: 0o600, l.TokenFile: 0o600} {
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want %v", p, fi.Mode(), err, want)
		}
	}
	if b, _ := os.ReadFile(l.TokenFile); string(b) != "t0k\n" {
		t.Errorf("token file holds %q", b)
	}
	l.Close()
	for _, p := range []string{l.Socket, l.TokenFile} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left after Close: %v", p, err)
		}
	}
}

// A socket a killed server left (nothing answers) is swept with its token
// file; a live one is refused, naming the server's pid.
func TestListenStaleAndLive(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "s.sock")
	ul, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ul.SetUnlinkOnClose(false)
	ul.Close() // as kill -9 leaves it
	os.Mkdir(filepath.Join(dir, "tokens"), 0o700)
	stale, _ := tokenPath(filepath.Join(dir, "tokens"), sock, true)
	os.WriteFile(stale, []byte("old\n"), 0o600)
	l, err := listenIn(t, sock)
	if err != nil {
		t.Fatalf("a stale socket was not swept: %v", err)
	}
	if b, _ := os.ReadFile(l.TokenFile); string(b) != "t0k\n" {
		t.Errorf("the stale token file was kept: %q", b)
	}
	_, err = listenIn(t, sock)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Errorf("a live socket: %v, want a refusal naming pid %d", err, os.Getpid())
	}
	if _, err := os.Lstat(l.TokenFile); err != nil {
		t.Errorf("the live server's token file went: %v", err)
	}
}

// Places the socket may not go.
func TestListenRefusedPlaces(t *testing.T) {
	base := t.TempDir()
	open := filepath.Join(base, "open")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777)
	link := filepath.Join(base, "link")
	os.Symlink(base, link)
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o600)
	for _, tc := range []struct{ name, sock string }{
		{"directly in /tmp", "/tmp/moat-test.sock"},
		{"an open directory", filepath.Join(open, "s.sock")},
		{"through a link", filepath.Join(link, "s.sock")},
		{"over a file", file},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := listenIn(t, tc.sock)
			var pe *PlaceError
			if !errors.As(err, &pe) {
				t.Errorf("Listen(%s): %v, want a PlaceError", tc.sock, err)
			}
		})
	}
	if _, err := listenIn(t, filepath.Join(base, "ok.sock")); err != nil {
		t.Errorf("control: a private directory: %v", err)
	}
}

// The default directory is made 0700 and refused when it is open, a
// link, or someone else's.
func TestDefaultSocketDirectory(t *testing.T) {
	rt, stateHome := t.TempDir(), t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", rt)
	t.Setenv("XDG_STATE_HOME", stateHome)
	l, err := Listen(ListenOptions{Token: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if l.Socket != filepath.Join(rt, "moat", socketName) {
		t.Errorf("socket %s", l.Socket)
	}
	// The token is in moat's state root, which every sandbox's view hides,
	// not beside the socket in the runtime directory.
	if filepath.Dir(l.TokenFile) != filepath.Join(stateHome, "moat", "serve") || filepath.Base(l.TokenFile) != tokenName {
		t.Errorf("token file %s", l.TokenFile)
	}
	if fi, _ := os.Stat(filepath.Dir(l.Socket)); fi.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v", fi.Mode())
	}
	l.Close()
	os.Chmod(filepath.Join(rt, "moat"), 0o750)
	if _, err := Listen(ListenOptions{Token: "x"}); err == nil {
		t.Error("a group-readable default directory was used")
	}
	os.Remove(filepath.Join(rt, "moat"))
	os.Symlink(t.TempDir(), filepath.Join(rt, "moat"))
	if _, err := Listen(ListenOptions{Token: "x"}); err == nil {
		t.Error("a default directory that is a link was used")
	}
	if os.Getuid() == 0 {
		os.Remove(filepath.Join(rt, "moat"))
		os.Mkdir(filepath.Join(rt, "moat"), 0o700)
		os.Chown(filepath.Join(rt, "moat"), 65534, 65534)
		if _, err := Listen(ListenOptions{Token: "x"}); err == nil {
			t.Error("someone else's default directory was used")
		}
	}
}

func TestCheckLoopback(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:0": true, "[::1]:8600": true, "127.1.2.3:80": true,
		"0.0.0.0:80": false, "[::]:80": false, "10.0.0.1:80": false, "localhost:80": false, "127.0.0.1": false, "[fe80::1%lo]:80": false,
	} {
		if _, err := CheckLoopback(addr); (err == nil) != ok {
			t.Errorf("CheckLoopback(%q) = %v", addr, err)
		}
	}
}
