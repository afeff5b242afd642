package runjournal

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/fileid"
)

// withStateRoot points the moat state directory at a fresh directory for
// one (non-parallel) test.
func withStateRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.Chmod(root, 0o700); err != nil {
		t.Fatal(err)
	}
	stateRootOverride = root
	t.Cleanup(func() { stateRootOverride = "" })
	return root
}

// openRun opens a run as New does, and collects what it reports.
func openRun(c Config) (*Run, *[]Found, error) {
	found := new([]Found)
	c.Hooks.Refuse = func(f Found) { *found = append(*found, f) }
	run, err := Open(c)
	return run, found, err
}

// TestJournalSweepsDeadRun: a journal whose owner is dead (its PID now
// names a process with another start time) is undone by the next New of
// any config: what that run created at the top of its place goes to the
// quarantine, what existed at its start stays, and each is a Refusal.
// The control is the same journal with a live owner, which is left alone.
func TestJournalSweepsDeadRun(t *testing.T) {
	for _, tt := range []struct {
		name string
		dead bool
		// bad names the place with a byte that is not UTF-8, beside a
		// decoy whose name has U+FFFD in its place (what JSON would
		// have turned the name into) holding a .moat-write of the user's.
		bad bool
	}{{"dead owner", true, false}, {"control: live owner", false, false}, {"dead owner, place not UTF-8", true, true}} {
		t.Run(tt.name, func(t *testing.T) {
			root := withStateRoot(t)
			place := t.TempDir()
			decoy := ""
			if tt.bad {
				parent := place
				place, decoy = filepath.Join(parent, "bad\xff"), filepath.Join(parent, "bad\uFFFD")
				for _, d := range []string{place, decoy} {
					if err := os.Mkdir(d, 0o700); err != nil {
						t.Fatal(err)
					}
				}
				if err := os.WriteFile(filepath.Join(decoy, ".moat-write"), []byte("decoy\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(place, ".moat-deny"), []byte("user's\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			dir, err := stateSub(root, "journal")
			if err != nil {
				t.Fatal(err)
			}
			o := selfOwner()
			if tt.dead {
				o.Start++
			}
			if err := os.MkdirAll(filepath.Join(place, "user", ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			j := &runJournal{Version: journalVersion, ID: "0123456789ab", Owner: o,
				Places: []journalPlace{{Path: place, Present: topControlEntries(place),
					Repos: []string{filepath.Join(place, "user", ".git")}}}}
			if _, err := writeJournal(dir, j); err != nil {
				t.Fatal(err)
			}
			// What the dead run's sandbox planted.
			if err := os.WriteFile(filepath.Join(place, ".moat-write"), []byte("**\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(place, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(place, ".git", "config"), []byte("[core]\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(place, "sub", ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			sb, found, err := openRun(Config{ID: newID()})
			if err != nil {
				t.Fatal(err)
			}
			defer sb.Close()
			_, errW := os.Lstat(filepath.Join(place, ".moat-write"))
			_, errG := os.Lstat(filepath.Join(place, ".git"))
			if b, err := os.ReadFile(filepath.Join(place, ".moat-deny")); err != nil || string(b) != "user's\n" {
				t.Errorf("an entry present at the dead run's start was touched: %q %v", b, err)
			}
			if !tt.dead {
				if errW != nil || errG != nil {
					t.Errorf("a live run's entries were swept: %v %v", errW, errG)
				}
				return
			}
			if errW == nil || errG == nil {
				t.Errorf("left in the place: .moat-write %v, .git %v", errW, errG)
			}
			if decoy != "" {
				if b, err := os.ReadFile(filepath.Join(decoy, ".moat-write")); err != nil || string(b) != "decoy\n" {
					t.Errorf("the sweep went to the decoy %q: %q %v", decoy, b, err)
				}
			}
			q := quarantineDir(root, j.ID, place)
			if b, err := os.ReadFile(filepath.Join(q, ".moat-write")); err != nil || string(b) != "**\n" {
				t.Errorf("quarantined .moat-write: %q %v", b, err)
			}
			if _, err := os.Stat(filepath.Join(q, ".git", "config")); err != nil {
				t.Errorf("quarantined .git: %v", err)
			}
			n := 0
			for _, r := range *found {
				if r.Kind == "control-path" && strings.Contains(r.Detail, "without closing") && strings.Contains(r.Detail, q) {
					n++
				}
			}
			if n != 3 {
				t.Errorf("want 3 control-path refusals naming %s, got %v", q, *found)
			}
			if _, err := os.Stat(filepath.Join(q, "sub", ".git")); err != nil {
				t.Errorf("quarantined sub/.git: %v", err)
			}
			if _, err := os.Stat(filepath.Join(place, "user", ".git")); err != nil {
				t.Errorf("a repository there at the dead run's start was touched: %v", err)
			}
			if _, err := os.Lstat(journalPath(dir, j.ID)); err == nil {
				t.Errorf("the dead run's journal is still there")
			}
		})
	}
}

// TestJournalCloseQuarantines: Close moves what the run created at the
// top of a supplied working directory into the state directory's
// quarantine, leaves nothing named like it in the place, and deletes the
// journal. Control: during the run the journal exists.
func TestJournalCloseQuarantines(t *testing.T) {
	root := withStateRoot(t)
	place := t.TempDir()
	sb, found, err := openRun(Config{ID: newID(), Places: []string{place}})
	if err != nil {
		t.Fatal(err)
	}
	if sb.file == nil {
		t.Fatal("control: no journal for a run with a supplied working directory")
	}
	if _, err := os.Stat(sb.file.path); err != nil {
		t.Fatalf("control: the journal is missing during the run: %v", err)
	}
	jp := sb.file.path
	// As the sandbox would (the run's effect, without needing a host
	// that can sandbox).
	if err := os.WriteFile(filepath.Join(place, ".moat-write"), []byte("**\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sb.CheckGit(0)
	sb.Close()
	entries, _ := os.ReadDir(place)
	for _, e := range entries {
		t.Errorf("left in the place: %s", e.Name())
	}
	q := filepath.Join(quarantineDir(root, sb.id, place), ".moat-write")
	if b, err := os.ReadFile(q); err != nil || string(b) != "**\n" {
		t.Errorf("quarantined content: %q %v", b, err)
	}
	named := false
	for _, r := range *found {
		named = named || r.Kind == "control-path" && strings.Contains(r.Detail, q)
	}
	if !named {
		t.Errorf("no Found names %s: %v", q, *found)
	}
	if _, err := os.Lstat(jp); err == nil {
		t.Errorf("the journal outlived Close")
	}
}

// FuzzParseJournal: the journal parser never panics, and what it accepts
// holds only absolute, clean paths and control names.
func FuzzParseJournal(f *testing.F) {
	f.Add([]byte(`{"version":"moat-journal 1","id":"0123456789ab","owner":{"pid":1,"start":2,"pidns":"x","boot":"y"},"places":[{"path":"/p","present":[{"name":".git","dev":1,"ino":2}]}],"deny":[{"path":"/p/d","made":["/p/a"]}]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		j, err := parseJournal(b)
		if err != nil {
			return
		}
		for _, p := range j.Places {
			if !filepath.IsAbs(p.Path) || filepath.Clean(p.Path) != p.Path {
				t.Fatalf("accepted place %q", p.Path)
			}
			for _, e := range p.Present {
				if !isTopControlName(e.Name) || strings.Contains(e.Name, "/") {
					t.Fatalf("accepted entry %q", e.Name)
				}
			}
		}
	})
}

// TestEscapePlace: a place's path becomes one file name, distinct paths
// stay distinct, and no escaped name climbs out.
func TestEscapePlace(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"/home/u/proj", "%2Fhome%2Fu%2Fproj"},
		{"/a b/c%d", "%2Fa%20b%2Fc%25d"},
		{"/x/..y", "%2Fx%2F..y"},
	} {
		if got := escapePlace(tt.in); got != tt.want || strings.ContainsRune(got, '/') {
			t.Errorf("escapePlace(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if escapePlace("/a/b") == escapePlace("/a%2Fb") {
		t.Errorf("two places share a quarantine name")
	}
}

// BenchmarkJournalNew is what the journal adds to New: the sweep of a
// state directory holding 10 journals of live runs, then writing and
// deleting this run's journal for one place.
func BenchmarkJournalNew(b *testing.B) {
	root := b.TempDir()
	if err := os.Chmod(root, 0o700); err != nil {
		b.Fatal(err)
	}
	stateRootOverride = root
	defer func() { stateRootOverride = "" }()
	dir, err := stateSub(root, "journal")
	if err != nil {
		b.Fatal(err)
	}
	place := b.TempDir()
	for i := 0; i < 10; i++ {
		j := &runJournal{Version: journalVersion, ID: newID(), Owner: selfOwner(),
			Places: []journalPlace{{Path: place}}}
		if _, err := writeJournal(dir, j); err != nil {
			b.Fatal(err)
		}
	}
	for _, sync := range []bool{true, false} {
		b.Run(fmt.Sprintf("fsync=%v", sync), func(b *testing.B) {
			journalSync = sync
			defer func() { journalSync = true }()
			for i := 0; i < b.N; i++ {
				s := &Run{id: newID(), places: []string{place}}
				s.sweepCrashed()
				if err := s.openJournal(nil); err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
		})
	}
}

// TestQuarantineAcrossFileSystems: a place on another file system than
// the state directory (tmpfs here) is quarantined by a copy, links kept
// as links, then the original removed. The control checks that the two
// directories do lie on different file systems, so that rename failed.
func TestQuarantineAcrossFileSystems(t *testing.T) {
	place, err := os.MkdirTemp("/dev/shm", "moat-qx-")
	if err != nil {
		t.Fatalf("control: no tmpfs to put a place on: %v", err)
	}
	defer os.RemoveAll(place)
	root := t.TempDir()
	if err := os.Chmod(root, 0o700); err != nil {
		t.Fatal(err)
	}
	pd, _, _ := fileid.Identity(place)
	rd, _, _ := fileid.Identity(root)
	if pd == rd {
		t.Fatalf("control: %s and %s are on one file system", place, root)
	}
	g := filepath.Join(place, ".git")
	if err := os.MkdirAll(filepath.Join(g, "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(g, "hooks", "post-checkout"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/elsewhere", filepath.Join(g, "link")); err != nil {
		t.Fatal(err)
	}
	dest, err := quarantine(root, "0123456789ab", place, g, ".git", newCopyBudget())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(g); err == nil {
		t.Errorf("%s is still in the place", g)
	}
	if b, err := os.ReadFile(filepath.Join(dest, "hooks", "post-checkout")); err != nil || string(b) != "#!/bin/sh\n" {
		t.Errorf("copied hook: %q %v", b, err)
	}
	if l, err := os.Readlink(filepath.Join(dest, "link")); err != nil || l != "/elsewhere" {
		t.Errorf("copied link: %q %v", l, err)
	}
}
