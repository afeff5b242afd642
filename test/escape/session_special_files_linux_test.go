package escape_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moat-sandbox/moat/internal/session"
)

// TestSessionFileAPISpecialFiles: as the user, a session's working
// directory holds a Unix socket (whose open fails ENXIO in the sandbox),
// a FIFO with no writer (which would block a plain open) and a directory;
// a read of each through the file API fails at once as not_regular_file
// naming its type, never internal and never a hang, and the file server
// still answers. The control: a regular file beside them reads.
func TestSessionFileAPISpecialFiles(t *testing.T) {
	m := sessionManager(t, session.Options{})
	s, err := m.Create(context.Background(), session.CreateRequest{})
	if err != nil {
		t.Fatal(err)
	}
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
	for _, tc := range []struct{ name, kind string }{{"sock", "socket"}, {"fifo", "fifo"}, {"dir", "dir"}} {
		start := time.Now()
		_, _, err := s.ReadFile(tc.name, 0)
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("read %s took %v", tc.name, d)
		}
		if sessionCode(err) != session.CodeNotRegular || !strings.Contains(err.Error(), "is a "+tc.kind+",") {
			t.Errorf("read %s: %v (code %q); want %s naming %q", tc.name, err, sessionCode(err), session.CodeNotRegular, tc.kind)
		}
	}
	if b, _, err := s.ReadFile("plain", 0); err != nil || string(b) != "plain" {
		t.Errorf("read of a regular file (the control): %q %v", b, err)
	}
}
