//go:build unix

package venv

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestFIFOsDoNotHang: a FIFO where moat reads pyvenv.cfg or a manifest
// (code that ran in the install sandbox, or with AllowPipInstall, can put
// one in the venv) is refused at once; before, the open blocked forever,
// before any sandbox existed, and moat ignored SIGINT and SIGTERM there.
// Control: a regular file at the same place is read.
func TestFIFOsDoNotHang(t *testing.T) {
	dir := t.TempDir()
	cfg, man := filepath.Join(dir, "pyvenv.cfg"), filepath.Join(dir, "m.json")
	for _, p := range []string{cfg, man} {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 2)
	go func() { _, err := readPyvenvCfg(dir); done <- err }()
	go func() { _, err := ReadManifest(man); done <- err }()
	for range 2 {
		select {
		case err := <-done:
			if err == nil {
				t.Error("a FIFO was read as a file")
			}
		case <-time.After(5 * time.Second):
			t.Fatal("reading a FIFO blocked")
		}
	}
	if err := os.Remove(cfg); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte("home = /usr/bin\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readPyvenvCfg(dir); err != nil {
		t.Fatalf("control: a regular pyvenv.cfg: %v", err)
	}
}

// TestBuildRecordFIFODoesNotHang: a FIFO where the build record belongs is
// refused at once, with a line that names it.
func TestBuildRecordFIFODoesNotHang(t *testing.T) {
	dir := t.TempDir()
	man := filepath.Join(dir, "m.json")
	if err := syscall.Mkfifo(buildRecordPath(man), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := sweepKilledBuild(filepath.Join(dir, "v"), man); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a FIFO was taken for a build record")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO build record hangs")
	}
}
