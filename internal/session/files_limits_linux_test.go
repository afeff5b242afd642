package session

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestSessionFileWriteBoundIsNarrowedFileSize: a session narrowed to a
// file-size limit of 4096 bytes refuses a larger write through the file
// API with too_large, naming 4096 and the settings, not the API's own
// 64 MiB; the positive control: a write of exactly 4096 bytes passes.
func TestSessionFileWriteBoundIsNarrowedFileSize(t *testing.T) {
	m := newManager(t, Options{})
	s := newSession(t, m, CreateRequest{Narrow: Narrowing{Limits: NarrowLimits{FileSizeBytes: 4096}}})
	if _, err := s.WriteFile("ok.bin", make([]byte, 4096), 0o644); err != nil {
		t.Fatalf("a write at the limit (the control): %v", err)
	}
	_, err := s.WriteFile("big.bin", make([]byte, 4097), 0o644)
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeTooLarge || e.Setting != "limits.max-file-size" ||
		!strings.Contains(e.Message, "4096 bytes") || !strings.Contains(e.Message, "narrow.limits.file_size_bytes") ||
		strings.Contains(e.Message, "67108864") {
		t.Errorf("a write past the narrowed limit: %#v", err)
	}
	if _, err := os.Lstat(filepath.Join(s.Info().WorkDir, "big.bin")); err == nil {
		t.Errorf("the refused write left a file")
	}
}

// TestWriteBound: the write bound is the smaller of the API's bound and
// the sandbox's file-size limit (0 its default, negative none).
func TestWriteBound(t *testing.T) {
	for _, tc := range []struct {
		lim  FileLimits
		want int64
		cap  bool
	}{
		{FileLimits{}, DefaultMaxFileBytes, false},
		{FileLimits{SandboxFileSize: 4096}, 4096, true},
		{FileLimits{SandboxFileSize: -1}, DefaultMaxFileBytes, false},
		{FileLimits{SandboxFileSize: 1 << 40}, DefaultMaxFileBytes, false},
		{FileLimits{MaxFileBytes: 100, SandboxFileSize: 4096}, 100, false},
	} {
		if got, c := writeBound(tc.lim); got != tc.want || c != tc.cap {
			t.Errorf("writeBound(%+v) = %d, %v; want %d, %v", tc.lim, got, c, tc.want, tc.cap)
		}
	}
}

// TestSessionReadsNoSpecialFile: through a session, a read of a socket,
// a FIFO, a directory or a device node fails as not_regular_file naming
// its type (a socket's open fails ENXIO in the sandbox), never internal;
// the control: a regular file beside them reads.
func TestSessionReadsNoSpecialFile(t *testing.T) {
	s := newSession(t, newManager(t, Options{}), CreateRequest{})
	work := s.Info().WorkDir
	l, err := net.Listen("unix", filepath.Join(work, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := syscall.Mkfifo(filepath.Join(work, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(work, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "plain"), []byte("plain"), 0o644); err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{"sock": "socket", "fifo": "fifo", "dir": "dir"}
	if err := syscall.Mknod(filepath.Join(work, "nodriver"), syscall.S_IFCHR|0o666, 240<<8|77); err == nil {
		rows["nodriver"] = "device"
	} else {
		t.Logf("no device node (mknod: %v)", err)
	}
	for name, kind := range rows {
		_, _, err := s.ReadFile(name, 0)
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeNotRegular || !strings.Contains(e.Message, "is a "+kind+",") {
			t.Errorf("read %s: %#v; want %s naming %q", name, err, CodeNotRegular, kind)
		}
	}
	if b, _, err := s.ReadFile("plain", 0); err != nil || string(b) != "plain" {
		t.Errorf("read of a regular file (the control): %q %v", b, err)
	}
}
