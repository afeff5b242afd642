//go:build unix

package hostview

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestSharedTempDir builds trees in a stand-in shared temp owned by the
// test's user, who plays root (adminUID), and asks for them on behalf of
// a sandbox user who is someone else, or the owner.
func TestSharedTempDir(t *testing.T) {
	defer func(old int) { adminUID = old }(adminUID)
	adminUID = os.Getuid()
	other := Owner{UID: os.Getuid() + 4242}
	tests := []struct {
		name  string
		build func(t *testing.T, d string) // d is the directory named
		who   Owner
		why   string // "" when shown
	}{
		{name: "only the admin writes it", build: func(t *testing.T, d string) {
			mkdir(t, d, 0o755)
			mkdir(t, filepath.Join(d, "sub"), 0o755)
			write(t, filepath.Join(d, "sub", "f"), 0o644)
			must(t, os.Symlink("/etc/passwd", filepath.Join(d, "link")))
		}, who: other},
		{name: "the sandbox user owns it", build: func(t *testing.T, d string) {
			mkdir(t, d, 0o755)
		}, who: Owner{UID: os.Getuid()}, why: "writable by the sandbox's user"},
		{name: "group-writable", build: func(t *testing.T, d string) {
			mkdir(t, d, 0o775)
		}, who: other, why: "not a directory only root can write"},
		{name: "a file inside anyone may write", build: func(t *testing.T, d string) {
			mkdir(t, d, 0o755)
			write(t, filepath.Join(d, "f"), 0o666)
		}, who: other, why: "writable by the sandbox's user"},
		{name: "a file inside the sandbox's group may write", build: func(t *testing.T, d string) {
			mkdir(t, d, 0o755)
			write(t, filepath.Join(d, "f"), 0o664)
		}, who: Owner{UID: other.UID, Groups: []int{os.Getgid()}}, why: "writable by the sandbox's user"},
		{name: "a socket inside", build: func(t *testing.T, d string) {
			mkdir(t, d, 0o755)
			l, err := net.Listen("unix", filepath.Join(d, "s"))
			must(t, err)
			t.Cleanup(func() { l.Close() })
		}, who: other, why: "is a socket"},
		{name: "a link in its place", build: func(t *testing.T, d string) {
			target := d + "-target"
			mkdir(t, target, 0o755)
			must(t, os.Symlink(target, d))
		}, who: other, why: "not a directory"},
		{name: "too large to check", build: func(t *testing.T, d string) {
			mkdir(t, d, 0o755)
			for i := range MaxSharedTempDirEntries + 1 {
				write(t, filepath.Join(d, "f"+strconv.Itoa(i)), 0o644)
			}
		}, who: other, why: "more than the entries"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			temp := t.TempDir()
			must(t, os.Chmod(temp, 0o755))
			d := filepath.Join(temp, "cache")
			tc.build(t, d)
			err := SharedTempDir(d, temp, tc.who)
			switch {
			case tc.why == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.why != "" && err == nil:
				t.Fatalf("shown; want it refused (%s)", tc.why)
			case tc.why != "" && (!errors.Is(err, ErrSharedTempDir) || !strings.Contains(err.Error(), tc.why)):
				t.Fatalf("error %v; want one saying %q", err, tc.why)
			}
		})
	}
}

func mkdir(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	must(t, os.Mkdir(p, mode))
	must(t, os.Chmod(p, mode))
}

func write(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	must(t, os.WriteFile(p, nil, mode))
	must(t, os.Chmod(p, mode))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
