package session

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
)

// newFilesSandbox is a strict sandbox over a fresh working directory, with
// this test binary granted as its file server, and its file API.
func newFilesSandbox(t testing.TB, cfg moat.Config, places func(work string) []Place) (*moat.Sandbox, *Files) {
	t.Helper()
	if cfg.WorkDir == "" {
		cfg.WorkDir = t.TempDir()
	}
	if cfg.Limits.MemoryBytes == 0 {
		cfg.Limits.MemoryBytes = testMemory
	}
	if err := GrantSelf(&cfg); err != nil {
		t.Fatalf("GrantSelf: %v", err)
	}
	sb, err := moat.New(cfg)
	if err != nil {
		t.Fatalf("moat.New: %v", err)
	}
	t.Cleanup(func() { sb.Close() })
	pl := []Place{{Path: sb.WorkDir(), Writable: true}}
	if places != nil {
		pl = places(sb.WorkDir())
	}
	f, err := StartFiles(sb, pl, FileLimits{MaxEntries: 100})
	if err != nil {
		t.Fatalf("StartFiles: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	return sb, f
}

func codeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if err != nil {
		return "not an *Error: " + err.Error()
	}
	return ""
}

func TestFilesRoundTrip(t *testing.T) {
	sb, f := newFilesSandbox(t, moat.Config{}, nil)
	work := sb.WorkDir()
	info, err := f.Write("dir-less.txt", []byte("hello"), 0o4755)
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	if info.Path != filepath.Join(work, "dir-less.txt") || info.Name != "dir-less.txt" || info.Type != "file" || info.Size != 5 || info.Mode != "0755" {
		t.Errorf("Write's info: %+v", info)
	}
	data, info, err := f.Read(filepath.Join(work, "dir-less.txt"), 0)
	if err != nil || string(data) != "hello" || info.Size != 5 {
		t.Errorf("Read: %q %+v %v", data, info, err)
	}
	if _, err := time.Parse(time.RFC3339Nano, info.MTime); err != nil {
		t.Errorf("mtime %q: %v", info.MTime, err)
	}
	if err := syscall.Mkfifo(filepath.Join(work, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, _, err := f.Read("fifo", 0); codeOf(err) != CodeNotRegular || time.Since(start) > time.Second {
		t.Errorf("Read of a FIFO: %v after %v", err, time.Since(start))
	}
	if _, _, err := f.Read("/etc/passwd", 0); codeOf(err) != CodePathRefused {
		t.Errorf("Read outside: %v", err)
	}
	if _, _, err := f.Read("../../etc/passwd", 0); codeOf(err) != CodePathRefused {
		t.Errorf("Read of ../..: %v", err)
	}
	if _, _, err := f.Read("missing", 0); codeOf(err) != CodeNotFound {
		t.Errorf("Read of a missing file: %v", err)
	}
	if _, err := f.Write("big", make([]byte, DefaultMaxFileBytes+1), 0); codeOf(err) != CodeTooLarge {
		t.Errorf("Write too large: %v", err)
	}
	entries, trunc, err := f.List("")
	if err != nil || trunc || len(entries) != 2 || entries[0].Name != "dir-less.txt" || entries[1].Type != "fifo" {
		t.Errorf("List: %+v %v %v", entries, trunc, err)
	}
	st, err := f.Stat("fifo")
	if err != nil || st.Type != "fifo" {
		t.Errorf("Stat: %+v %v", st, err)
	}
}

// TestFilesRestart kills the server between calls: the next call starts
// another and succeeds.
func TestFilesRestart(t *testing.T) {
	_, f := newFilesSandbox(t, moat.Config{}, nil)
	if _, err := f.Write("a", []byte("1"), 0); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.srv.cmd.Process.Signal(syscall.SIGKILL)
	<-f.srv.done
	f.mu.Unlock()
	if data, _, err := f.Read("a", 0); err != nil || string(data) != "1" {
		t.Fatalf("Read after the server died: %q %v", data, err)
	}
	f.Close()
	if _, _, err := f.Read("a", 0); codeOf(err) != CodeClosed {
		t.Errorf("Read after Close: %v", err)
	}
}

// TestFilesGrantSelfRefusesWritableBinary: a binary inside a writable
// place is refused.
func TestFilesGrantSelfRefusesWritableBinary(t *testing.T) {
	bin, err := selfBinary()
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []moat.Config{
		{WorkDir: filepath.Dir(bin)},
		{Grants: []moat.Grant{{Path: filepath.Dir(bin), Access: moat.WRITE}}},
	} {
		if err := GrantSelf(&cfg); err == nil {
			t.Errorf("GrantSelf(%+v) passed", cfg)
		}
	}
	cfg := moat.Config{Grants: []moat.Grant{{Path: filepath.Dir(bin), Access: moat.READ}}}
	if err := GrantSelf(&cfg); err != nil || len(cfg.Grants) != 2 || cfg.Grants[1].Path != bin {
		t.Errorf("GrantSelf with a read grant: %v %+v", err, cfg.Grants)
	}
	if err := checkServerBinary(bin, nil); err != nil {
		t.Errorf("checkServerBinary: %v", err)
	}
}

// BenchmarkFilesRead reads a small file through the file API, and the
// same file with os.ReadFile, interleaved, for the ratio.
func BenchmarkFilesRead(b *testing.B) {
	sb, f := newFilesSandbox(b, moat.Config{}, nil)
	p := filepath.Join(sb.WorkDir(), "small.txt")
	content := bytes.Repeat([]byte("x"), 1024)
	if err := os.WriteFile(p, content, 0o644); err != nil {
		b.Fatal(err)
	}
	b.Run("api", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := f.Read("small.txt", 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("os", func(b *testing.B) {
		for b.Loop() {
			if _, err := os.ReadFile(p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("api-write", func(b *testing.B) {
		for b.Loop() {
			if _, err := f.Write("small.txt", content, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	})
}
