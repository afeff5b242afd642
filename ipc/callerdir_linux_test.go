package ipc

import (
	"net"
	"os"
	"path/filepath"
	"testing"
)

// TestCallerDirOpen: the caller's directory opens beneath the peer's root
// when it is a real directory, and not when a link, a "..", a relative or
// an unclean path is on the way.
func TestCallerDirOpen(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	os.Mkdir(real, 0o700)
	os.Symlink(real, filepath.Join(dir, "link"))
	l, err := net.Listen("unix", filepath.Join(dir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := net.Dial("unix", filepath.Join(dir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	srv, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	peer := peerOf(srv)
	if peer == nil {
		t.Fatal("no peer for a Unix connection")
	}
	defer peer.close()
	cases := []struct {
		dir string
		ok  bool
	}{
		{real, true},
		{"/", true},
		{filepath.Join(dir, "link"), false},
		{real + "/../real", false},
		{"real", false},
		{real + "/", false},
		{filepath.Join(dir, "missing"), false},
		{filepath.Join(dir, "s"), false},
	}
	for _, tc := range cases {
		f, err := peer.openDir(tc.dir)
		if (f != nil) != tc.ok {
			t.Errorf("openDir(%q) = %v, %v; want ok %v", tc.dir, f, err, tc.ok)
		}
		if f != nil {
			fi, _ := f.Stat()
			want, _ := os.Stat(tc.dir)
			if !os.SameFile(fi, want) {
				t.Errorf("openDir(%q) opened another directory", tc.dir)
			}
			f.Close()
		}
	}
}
