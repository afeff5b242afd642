package ipchost

import (
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSweepIPC: the sweep removes the IPC directories no server is behind
// (a socket that refuses connections, or no socket for over a minute) and
// keeps a live one, a fresh one and anything not named like one.
func TestSweepIPC(t *testing.T) {
	base := t.TempDir()
	mk := func(name string) string {
		d := filepath.Join(base, name)
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		return d
	}
	listen := func(dir string) *net.UnixListener {
		l, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, socketName), Net: "unix"})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	dead := mk("moat-aaa-ipc-1")
	l := listen(dead)
	l.SetUnlinkOnClose(false)
	l.Close() // the socket file stays; nothing listens
	live := mk("moat-bbb-ipc-2")
	defer listen(live).Close()
	fresh := mk("moat-ccc-ipc-3")
	old := mk("moat-ddd-ipc-4")
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	other := mk("not-moat-5")
	if err := os.Chtimes(other, past, past); err != nil {
		t.Fatal(err)
	}
	sweepOnce(base)
	for dir, keep := range map[string]bool{dead: false, live: true, fresh: true, old: false, other: true} {
		_, err := os.Lstat(dir)
		if exists := err == nil; exists != keep {
			t.Errorf("%s: exists %v after the sweep, want %v", filepath.Base(dir), exists, keep)
		}
	}
}
