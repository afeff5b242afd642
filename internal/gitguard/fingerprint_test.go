package gitguard

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// What the scan cannot compare by content (a hook over maxHash, one past
// the byte budget, an unreadable hook, a hooks/ over maxSmallDir entries)
// is compared by its stat fingerprint: left alone when untouched, set
// aside when the run wrote it, even with its mtime put back. The old rule
// (unsure = changed) set aside the untouched ones too.
func TestFingerprintStandsForContent(t *testing.T) {
	defer func(m time.Duration, h int64) { printMargin, hashBudget = m, h }(printMargin, hashBudget)
	printMargin = 20 * time.Millisecond
	type tc struct {
		name  string
		setup func(t *testing.T, w string) string // returns the path to watch
		root  bool                                // meaningful as root
	}
	big := func(t *testing.T, p string, size int64) {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, size); err != nil {
			t.Fatal(err)
		}
	}
	cases := []tc{
		{"over maxHash", func(t *testing.T, w string) string {
			p := filepath.Join(w, ".git/hooks/pre-commit")
			big(t, p, maxHash+1)
			return p
		}, true},
		{"past the byte budget", func(t *testing.T, w string) string {
			hashBudget = 1 << 20
			big(t, filepath.Join(w, ".git/hooks/a"), 1<<20-64)
			p := filepath.Join(w, ".git/hooks/b")
			big(t, p, 1<<20)
			return p
		}, true},
		{"unreadable", func(t *testing.T, w string) string {
			p := filepath.Join(w, ".git/hooks/pre-commit")
			if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0); err != nil {
				t.Fatal(err)
			}
			return p
		}, false},
		{"large hooks dir", func(t *testing.T, w string) string {
			for i := 0; i < maxSmallDir+10; i++ {
				if err := os.WriteFile(filepath.Join(w, ".git/hooks", fmt.Sprint(i)), []byte("x"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			return filepath.Join(w, ".git/hooks/17")
		}, true},
	}
	for _, c := range cases {
		for _, write := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/written=%v", c.name, write), func(t *testing.T) {
				hashBudget = MaxHashBytes
				if !c.root && os.Geteuid() == 0 {
					t.Skip("root reads a mode-000 file; test/escape runs this row as an unprivileged user")
				}
				w := t.TempDir()
				tree(t, w, repo(".git/"))
				p := c.setup(t, w)
				time.Sleep(3 * printMargin)
				snap := Take([]string{w})
				if write {
					fi, _ := os.Lstat(p)
					mode := fi.Mode().Perm()
					os.Chmod(p, 0o600)
					f, err := os.OpenFile(p, os.O_WRONLY, 0)
					if err != nil {
						t.Fatal(err)
					}
					f.WriteAt([]byte("#!/bin/sh\necho PWN\n"[:9]), 0) // same size
					f.Close()
					os.Chmod(p, mode)
					os.Chtimes(p, fi.ModTime(), fi.ModTime()) // mtime put back; ctime cannot be
				}
				found := snap.Check(sfx)
				_, err := os.Lstat(p)
				if write && err == nil {
					t.Fatalf("a hook the run wrote stayed in place: %q", found)
				}
				if !write && (err != nil || len(found) != 0) {
					t.Fatalf("an untouched hook was set aside: %v %q", err, found)
				}
			})
		}
	}
}

// A .git/config over 1 MiB (20,000 branches) is kept whole: a no-op run
// leaves it, and a run that changes it gets the original back.
func TestLargeConfigKept(t *testing.T) {
	defer func(m time.Duration) { printMargin = m }(printMargin)
	printMargin = 20 * time.Millisecond
	var b strings.Builder
	b.WriteString("[core]\n\trepositoryformatversion = 0\n\tbare = false\n")
	for i := 0; b.Len() < 3<<19; i++ {
		fmt.Fprintf(&b, "[branch \"feature-%06d\"]\n\tremote = origin\n\tmerge = refs/heads/feature-%06d\n", i, i)
	}
	for _, write := range []bool{false, true} {
		t.Run(fmt.Sprint(write), func(t *testing.T) {
			w := t.TempDir()
			tree(t, w, merge(repo(".git/"), map[string]string{".git/config": b.String()}))
			time.Sleep(3 * printMargin)
			snap := Take([]string{w})
			p := filepath.Join(w, ".git/config")
			if write {
				os.WriteFile(p, []byte("[core]\n\tfsmonitor = echo PWN\n"), 0o644)
			}
			found := snap.Check(sfx)
			got, err := os.ReadFile(p)
			if err != nil || string(got) != b.String() {
				t.Fatalf("config not the user's after the run (err %v, %d bytes): %q", err, len(got), found)
			}
			if (len(found) > 0) != write {
				t.Fatalf("findings %q", found)
			}
		})
	}
}

// A new repository whose config cannot be read whole is set aside, and a
// minimal inert config takes its place so that the repository still works.
func TestNewRepoLargeConfigGetsMinimalConfig(t *testing.T) {
	w := t.TempDir()
	snap := Take([]string{w})
	var b bytes.Buffer
	b.WriteString("[core]\n\trepositoryformatversion = 1\n\tfsmonitor = echo PWN\n[extensions]\n\tobjectformat = sha256\n")
	for b.Len() < maxConfig+10 {
		b.WriteString("[alias]\n\tx = !echo PWN\n")
	}
	tree(t, w, merge(repo("r/.git/"), map[string]string{"r/.git/config": b.String()}))
	found := snap.Check(sfx)
	got, err := os.ReadFile(filepath.Join(w, "r/.git/config"))
	if err != nil {
		t.Fatalf("no config left: %v %q", err, found)
	}
	if strings.Contains(string(got), "PWN") || !strings.Contains(string(got), "sha256") || !strings.Contains(string(got), "bare = false") {
		t.Fatalf("config written back:\n%s", got)
	}
}
