package session

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
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
// same file with os.ReadFile and with cat run in the sandbox, for the
// ratios; then writes it through the API (a new file, fsync, rename).
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
	b.Run("sandboxed-cat", func(b *testing.B) {
		for b.Loop() {
			if _, err := sb.Command("cat", p).Output(); err != nil {
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

// TestFilesOutliveCommandTimeout: under a sandbox's per-command timeout
// the file server is replaced before the limit ends it, so calls keep
// working and no timeout refusal is recorded. Control: without
// CommandTimeout the limit ends the server (a refusal), and the next call
// still works by a restart.
func TestFilesOutliveCommandTimeout(t *testing.T) {
	for _, known := range []bool{true, false} {
		cfg := moat.Config{WorkDir: t.TempDir(), Limits: moat.Limits{MemoryBytes: testMemory, Timeout: 4 * time.Second}}
		if err := GrantSelf(&cfg); err != nil {
			t.Fatal(err)
		}
		sb, err := moat.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer sb.Close()
		lim := FileLimits{}
		if known {
			lim.CommandTimeout = cfg.Limits.Timeout
		}
		f, err := StartFiles(sb, []Place{{Path: sb.WorkDir(), Writable: true}}, lim)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		// A call's deadline is a quarter of the timeout: long enough for a
		// write (and a server's restart) on a loaded machine.
		for i := 0; i < 5; i++ {
			if _, err := f.Write("f", []byte("x"), 0); err != nil {
				t.Fatalf("call %d (CommandTimeout known %v): %v", i, known, err)
			}
			time.Sleep(1300 * time.Millisecond)
		}
		refused := false
		for _, r := range sb.Refusals() {
			refused = refused || strings.Contains(r.String(), "timeout")
		}
		if refused == known {
			t.Errorf("CommandTimeout known %v: a timeout refusal recorded: %v (%v)", known, refused, sb.Refusals())
		}
	}
}

// TestFilesRetireIdle: a server idle past its wait is retired (it exits
// 0, no refusal), and the next call starts another.
func TestFilesRetireIdle(t *testing.T) {
	sb, f := newFilesSandbox(t, moat.Config{}, nil)
	f.mu.Lock()
	f.idle = 200 * time.Millisecond
	f.stop() // the next call starts one that waits f.idle
	f.mu.Unlock()
	if _, err := f.Write("a", []byte("1"), 0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	f.mu.Lock()
	retired := f.srv == nil
	f.mu.Unlock()
	if !retired {
		t.Errorf("the server still runs after a second idle")
	}
	if data, _, err := f.Read("a", 0); err != nil || string(data) != "1" {
		t.Errorf("the call after: %q %v", data, err)
	}
	if r := sb.Refusals(); len(r) != 0 {
		t.Errorf("refusals: %v", r)
	}
}
