package linux

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestControlPlanFIFOsDoNotHang: a FIFO where pinning reads a control file
// (a commondir, a .git file, an included config), which a concurrent
// run's sandbox can make in the same place, is refused at once; a plain
// open would block the next run before its command starts. Control: a
// regular commondir at the same place is read.
func TestControlPlanFIFOsDoNotHang(t *testing.T) {
	g := filepath.Join(t.TempDir(), ".git")
	if err := os.Mkdir(g, 0o755); err != nil {
		t.Fatal(err)
	}
	common := filepath.Join(g, "commondir")
	if err := syscall.Mkfifo(common, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	go func() { done <- readGitPointer(common, g, false) }()
	select {
	case got := <-done:
		if got != "" {
			t.Errorf("a FIFO commondir read as %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO commondir blocked")
	}
	if err := os.Remove(common); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(filepath.Dir(g), "other"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(common, []byte("../other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := readGitPointer(common, g, false); got == "" {
		t.Error("control: a regular commondir was not read")
	}
}
