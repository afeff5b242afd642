//go:build unix

package hostview

import (
	"fmt"
	"net"
	"os"
	"slices"
	"syscall"
	"testing"
	"time"
)

func TestSharedTempFilesLeaveOutLinksAndSockets(t *testing.T) {
	dir := t.TempDir()
	mk := func(rel string) string {
		p := dir + "/" + rel
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	file := func(rel string, mode os.FileMode) string {
		p := dir + "/" + rel
		if err := os.WriteFile(p, []byte("x"), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	plain := file("plain.txt", 0o644)
	file("mine.txt", 0o600) // only its owner may read it: a credential, say
	mk("emptydir")          // a directory, however empty, could grow a socket
	mk("agent")
	ln, err := net.Listen("unix", dir+"/agent/sock")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ln2, err := net.Listen("unix", dir+"/top.sock")
	if err != nil {
		t.Fatal(err)
	}
	defer ln2.Close()
	if err := syscall.Mkfifo(dir+"/fifo", 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/hostname", dir+"/link"); err != nil {
		t.Fatal(err)
	}
	file("moat-other-sandbox-file", 0o644)
	own := file("own-grant.txt", 0o644)
	got := SharedTempFiles([]string{dir}, []string{own})
	if len(got) != 1 || got[0] != plain {
		t.Errorf("SharedTempFiles = %q, want only %q", got, plain)
	}
}

// A listed file that became a link, lost its others-read bit or vanished
// drops out of a later configuration; one still shared stays.
func TestStillShared(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, mode os.FileMode) string {
		p := dir + "/" + name
		if err := os.WriteFile(p, []byte("x"), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	keep := mk("keep", 0o644)
	private := mk("private", 0o644)
	link := mk("link", 0o644)
	gone := mk("gone", 0o644)
	list := SharedTempFiles([]string{dir}, nil)
	if len(list) != 4 {
		t.Fatalf("listed %q, want 4 files", list)
	}
	os.Chmod(private, 0o600)
	os.Remove(link)
	os.Symlink(keep, link)
	os.Remove(gone)
	if got := StillShared(list); len(got) != 1 || got[0] != keep {
		t.Errorf("StillShared = %q, want only %q", got, keep)
	}
}

// Past the limit, the newest files are shown: the one just written for the
// sandbox is never left out, whatever order the directory lists them in.
func TestSharedTempFilesKeepsNewest(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	for i := range SharedTempLimit + 50 {
		p := fmt.Sprintf("%s/old-%04d", dir, i)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	fresh := dir + "/fresh.txt"
	if err := os.WriteFile(fresh, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got := SharedTempFiles([]string{dir}, nil)
	if len(got) != SharedTempLimit {
		t.Fatalf("listed %d files, want the limit %d", len(got), SharedTempLimit)
	}
	if !slices.Contains(got, fresh) {
		t.Errorf("the newest file %s was left out", fresh)
	}
}
