package fileserve

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// newTestServer serves a fresh working directory (writable) and a
// read-only place; outside is a directory beside them that is no place.
func newTestServer(t *testing.T) (s *server, work, ro, outside string) {
	t.Helper()
	root := t.TempDir()
	work, ro, outside = filepath.Join(root, "work"), filepath.Join(root, "ro"), filepath.Join(root, "outside")
	for _, d := range []string{work, ro, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := open(Config{WorkDir: work, Places: []Place{{work, true}, {ro, false}},
		MaxFileBytes: 1 << 20, MaxReadBytes: 1 << 20, MaxEntries: 3})
	if err != nil {
		t.Fatal(err)
	}
	return s, work, ro, outside
}

func TestServerCalls(t *testing.T) {
	s, work, ro, outside := newTestServer(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(outside, filepath.Join(work, "out")))
	must(os.Symlink(filepath.Join(outside, "secret"), filepath.Join(work, "secretlink")))
	must(os.Symlink("../outside/secret", filepath.Join(work, "rellink")))
	must(os.Mkdir(filepath.Join(work, "sub"), 0o755))
	must(os.WriteFile(filepath.Join(work, "sub", "f"), []byte("in sub"), 0o644))
	must(os.Symlink("sub", filepath.Join(work, "sublink")))
	must(syscall.Mkfifo(filepath.Join(work, "fifo"), 0o644))
	must(os.WriteFile(filepath.Join(ro, "r"), []byte("read-only"), 0o644))

	for _, tc := range []struct {
		name     string
		req      Request
		wantCode string
		wantKind string
		wantData string
	}{
		{"write", Request{Op: OpWrite, Path: "new.txt", Data: []byte("hello"), Mode: 0o4755}, "", "", ""},
		{"read back", Request{Op: OpRead, Path: "new.txt"}, "", "", "hello"},
		{"read bounded", Request{Op: OpRead, Path: "new.txt", Max: 2}, "", "", "he"},
		{"read absolute", Request{Op: OpRead, Path: work + "/sub/f"}, "", "", "in sub"},
		{"through a link inside", Request{Op: OpRead, Path: "sublink/f"}, "", "", "in sub"},
		{"dotdot inside", Request{Op: OpRead, Path: "sub/../sub/f"}, "", "", "in sub"},
		{"dotdot out", Request{Op: OpRead, Path: "../outside/secret"}, CodeRefused, "", ""},
		{"absolute outside", Request{Op: OpRead, Path: outside + "/secret"}, CodeRefused, "", ""},
		{"absolute dotdot", Request{Op: OpRead, Path: work + "/../outside/secret"}, CodeRefused, "", ""},
		{"dir link out", Request{Op: OpRead, Path: "out/secret"}, CodeRefused, "", ""},
		{"write through dir link out", Request{Op: OpWrite, Path: "out/planted", Data: []byte("x")}, CodeRefused, "", ""},
		{"final link", Request{Op: OpRead, Path: "secretlink"}, CodeNotRegular, TypeSymlink, ""},
		{"relative link out as dir", Request{Op: OpRead, Path: "rellink/x"}, CodeRefused, "", ""},
		{"fifo", Request{Op: OpRead, Path: "fifo"}, CodeNotRegular, TypeFIFO, ""},
		{"dir", Request{Op: OpRead, Path: "sub"}, CodeNotRegular, TypeDir, ""},
		{"missing", Request{Op: OpRead, Path: "nope"}, CodeNotFound, "", ""},
		{"read-only place read", Request{Op: OpRead, Path: ro + "/r"}, "", "", "read-only"},
		{"read-only place write", Request{Op: OpWrite, Path: ro + "/r", Data: []byte("x")}, CodeRefused, "", ""},
		{"write over a dir", Request{Op: OpWrite, Path: "sub", Data: []byte("x")}, CodeNotRegular, TypeDir, ""},
		{"write the place", Request{Op: OpWrite, Path: ".", Data: []byte("x")}, CodeNotRegular, TypeDir, ""},
		{"too large", Request{Op: OpWrite, Path: "big", Data: make([]byte, 1<<20+1)}, CodeTooLarge, "", ""},
		{"list a file", Request{Op: OpList, Path: "new.txt"}, CodeNotRegular, TypeFile, ""},
		{"list a link", Request{Op: OpList, Path: "sublink"}, CodeNotRegular, TypeSymlink, ""},
		{"bad op", Request{Op: "chmod", Path: "new.txt"}, CodeBadRequest, "", ""},
	} {
		start := time.Now()
		rep := s.handle(tc.req)
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: took %v", tc.name, d)
		}
		code, kind := "", ""
		if rep.Error != nil {
			code, kind = rep.Error.Code, rep.Error.Kind
		}
		if code != tc.wantCode || kind != tc.wantKind || string(rep.Data) != tc.wantData {
			t.Errorf("%s: got %+v (data %q); want code %q kind %q data %q", tc.name, rep.Error, rep.Data, tc.wantCode, tc.wantKind, tc.wantData)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret")); string(b) != "SECRET" {
		t.Errorf("outside changed: %q", b)
	}
	if _, err := os.Lstat(filepath.Join(outside, "planted")); err == nil {
		t.Errorf("a write reached outside")
	}
	fi, err := os.Stat(filepath.Join(work, "new.txt"))
	if err != nil || fi.Mode() != 0o755 {
		t.Errorf("new.txt: %v, %v; want mode 0755 with no setuid", fi.Mode(), err)
	}
	leftovers, _ := filepath.Glob(filepath.Join(work, ".wr-*"))
	if len(leftovers) != 0 {
		t.Errorf("temporary files left: %q", leftovers)
	}
}

func TestServerReplacesLinksAtTheName(t *testing.T) {
	s, work, _, outside := newTestServer(t)
	victim := filepath.Join(outside, "secret")
	if err := os.Link(victim, filepath.Join(work, "hard")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(work, "soft")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(work, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"hard", "soft", "fifo"} {
		rep := s.handle(Request{Op: OpWrite, Path: name, Data: []byte("new " + name), Mode: 0o644})
		if rep.Error != nil {
			t.Fatalf("write %s: %+v", name, rep.Error)
		}
		fi, err := os.Lstat(filepath.Join(work, name))
		if err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s: not replaced by a regular file: %v %v", name, fi, err)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "SECRET" {
		t.Errorf("the other link's file changed: %q", b)
	}
}

func TestServerList(t *testing.T) {
	s, work, _, _ := newTestServer(t)
	for _, n := range []string{"b", "a", "c", "d"} {
		if err := os.WriteFile(filepath.Join(work, n), []byte(n), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(work, "e")); err != nil {
		t.Fatal(err)
	}
	rep := s.handle(Request{Op: OpList, Path: ""})
	if rep.Error != nil || !rep.Truncated || len(rep.Entries) != 3 {
		t.Fatalf("list: %+v", rep)
	}
	s.cfg.MaxEntries = 10
	rep = s.handle(Request{Op: OpList, Path: work})
	var names []string
	for _, e := range rep.Entries {
		names = append(names, e.Name+":"+e.Type+":"+e.Target)
		if e.Path != work+"/"+e.Name {
			t.Errorf("entry path %q", e.Path)
		}
	}
	if got := strings.Join(names, ","); rep.Truncated || got != "a:file:,b:file:,c:file:,d:file:,e:symlink:/etc/passwd" {
		t.Errorf("list = %s (truncated %v)", got, rep.Truncated)
	}
	st := s.handle(Request{Op: OpStat, Path: "e"})
	if st.Error != nil || st.Info.Type != TypeSymlink || st.Info.Target != "/etc/passwd" {
		t.Errorf("stat of a link: %+v %+v", st.Error, st.Info)
	}
	st = s.handle(Request{Op: OpStat, Path: "sub/.."})
	if st.Error == nil {
		t.Errorf("stat of a missing dir's parent: %+v", st.Info)
	}
	st = s.handle(Request{Op: OpStat, Path: "."})
	if st.Error != nil || st.Info.Type != TypeDir || st.Info.Path != work {
		t.Errorf("stat of the place: %+v %+v", st.Error, st.Info)
	}
}

// TestRootFallback checks the os.Root walk used where openat2 is missing.
func TestRootFallback(t *testing.T) {
	s, work, _, outside := newTestServer(t)
	if err := os.Symlink(outside, filepath.Join(work, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(work, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a/b", filepath.Join(work, "in")); err != nil {
		t.Fatal(err)
	}
	pl := &s.places[0]
	for _, tc := range []struct {
		dir string
		ok  bool
	}{{".", true}, {"a/b", true}, {"in", true}, {"a/b/../..", true}, {"..", false}, {"out", false}, {"a/../../outside", false}, {"nope", false}} {
		fd, err := pl.rootOpen(tc.dir)
		if (err == nil) != tc.ok {
			t.Errorf("rootOpen(%q): %v; want ok %v", tc.dir, err, tc.ok)
		}
		if err == nil {
			syscall.Close(fd)
		}
	}
}
