//go:build unix

package quarantine

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestPruneLockedEntry: an entry holding directories a sandbox made
// unwritable (0500), unreadable (0000) or search-only (0100), at the top
// and deeper, is removed by prune (--all and by age); a plain
// os.RemoveAll of the same tree fails, as the first prune did (run as an
// unprivileged user: root ignores the modes).
func TestPruneLockedEntry(t *testing.T) {
	for _, l := range []Limits{{All: true}, {MaxAge: time.Hour}} {
		root := t.TempDir()
		place := newEntry(t, root, "aaaaaaaaaaaa", "/w", map[string]string{".git/ro/g": "y", ".git/a/b/c/none/h": "z", ".git/x/i": "w"}, 2*time.Hour)
		git := filepath.Join(place, ".git")
		must(t, os.Chmod(filepath.Join(git, "ro"), 0o500))
		must(t, os.Chmod(filepath.Join(git, "a", "b", "c", "none"), 0o000))
		must(t, os.Chmod(filepath.Join(git, "x"), 0o100))
		must(t, os.Chtimes(filepath.Join(Dir(root), "aaaaaaaaaaaa"), time.Now().Add(-2*time.Hour), time.Now().Add(-2*time.Hour)))
		if os.Geteuid() != 0 {
			if err := os.RemoveAll(filepath.Join(git, "ro")); err == nil {
				t.Fatal("control: os.RemoveAll removed the 0500 directory, so the case shows nothing")
			}
		} else {
			t.Log("LOUD: running as root, which ignores directory modes: the os.RemoveAll control is not tried; run as an unprivileged user")
		}
		res, err := Prune(root, l, time.Now())
		if err != nil || res.Unfinished || len(res.Removed) != 1 {
			t.Fatalf("prune %+v: %+v, %v", l, res, err)
		}
		if ents, _ := os.ReadDir(Dir(root)); len(ents) != 0 {
			t.Fatalf("prune %+v left %v", l, ents)
		}
	}
}

// TestPruneBudget: an entry of 100,000 files goes out of the quarantine at
// the first prune (list no longer shows it), and its files over several
// prunes of 30,000 entries each; AutoPrune goes on with the removal at
// every call, not only hourly. list reads at most MaxWalk of it.
func TestPruneBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED in -short mode: makes 100,000 files")
	}
	root := t.TempDir()
	place := newEntry(t, root, "aaaaaaaaaaaa", "/w", map[string]string{".git/objects/keep": "x"}, 2*time.Hour)
	objs := filepath.Join(place, ".git", "objects")
	for i := 0; i < 100_000; i++ {
		f, err := os.OpenFile(filepath.Join(objs, strconv.Itoa(i)), os.O_CREATE|os.O_WRONLY, 0o600)
		must(t, err)
		f.Close()
	}
	must(t, os.Chmod(objs, 0o500))
	must(t, os.Chtimes(filepath.Join(Dir(root), "aaaaaaaaaaaa"), time.Now().Add(-2*time.Hour), time.Now().Add(-2*time.Hour)))

	ents, err := List(root)
	if err != nil || len(ents) != 1 || !ents[0].Truncated || ents[0].Count > MaxWalk {
		t.Fatalf("list of a 100,000-file entry: %+v, %v (want one entry, Truncated, Count <= %d)", ents, err, MaxWalk)
	}

	res, err := Prune(root, Limits{All: true, Budget: 30_000}, time.Now())
	if err != nil || len(res.Removed) != 1 || !res.Unfinished {
		t.Fatalf("first prune: %+v, %v (want the entry removed, the trash unfinished)", res, err)
	}
	if ents, _ := List(root); len(ents) != 0 || !TrashPending(root) {
		t.Fatalf("after the first prune: list %v, trash pending %v", ents, TrashPending(root))
	}
	calls := 1
	for res.Unfinished {
		calls++
		if calls > 10 {
			t.Fatal("10 prunes of 30,000 did not remove 100,000 files")
		}
		res, err = Prune(root, Limits{Budget: 30_000}, time.Now())
		must(t, err)
	}
	if calls != 4 {
		t.Errorf("%d prunes of 30,000 entries removed 100,000 files; want 4", calls)
	}
	if _, err := os.Lstat(filepath.Join(Dir(root), trashName)); err == nil || TrashPending(root) {
		t.Fatal("the trash stays after it was emptied")
	}
}

// TestAutoPruneGoesOn: within the hour AutoPrune prunes nothing, but it
// empties a trash an earlier prune left.
func TestAutoPruneGoesOn(t *testing.T) {
	root := t.TempDir()
	newEntry(t, root, "aaaaaaaaaaaa", "/w", map[string]string{".git/a": "x", ".git/b": "y", ".git/c": "z"}, 2*time.Hour)
	must(t, AutoPrune(root, time.Now())) // stamps the hour; keeps the young entry
	must(t, Remove(root, "aaaaaaaaaaaa"))
	if !TrashPending(root) {
		t.Fatal("Remove left no trash")
	}
	must(t, AutoPrune(root, time.Now()))
	if TrashPending(root) {
		t.Fatal("AutoPrune within the hour left the trash")
	}
}

// TestShowBounded: an entry of 3000 files of 16 KiB of NUL bytes (each
// escaped to six bytes) would print 280 MiB; show prints at most
// MaxShowOutput and says what it left out. The control is that size,
// computed from the files.
func TestShowBounded(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	nul := strings.Repeat("\x00", MaxShowFile)
	for i := 0; i < 3000; i++ {
		files[".git/f"+strconv.Itoa(i)] = nul
	}
	newEntry(t, root, "aaaaaaaaaaaa", "/w", files, time.Hour)
	e, err := Read(root, "aaaaaaaaaaaa")
	must(t, err)
	unbounded := 0
	for range e.Places[0].Files {
		unbounded += len(Escape(nul, true))
	}
	if unbounded <= 100*MaxShowOutput {
		t.Fatalf("control: the entry escapes to only %d bytes", unbounded)
	}
	var out bytes.Buffer
	must(t, Show(&out, e, nil))
	if out.Len() > MaxShowOutput+1024 {
		t.Fatalf("show printed %d bytes, over %d", out.Len(), MaxShowOutput)
	}
	if !strings.Contains(out.String(), "more files not shown") {
		t.Fatalf("show does not say what it left out:\n%s", out.String()[max(0, out.Len()-500):])
	}
	// Many files with little content: the file cap holds.
	files = map[string]string{}
	for i := 0; i < 3000; i++ {
		files[".git/e"+strconv.Itoa(i)] = ""
	}
	newEntry(t, root, "bbbbbbbbbbbb", "/w", files, time.Hour)
	e, err = Read(root, "bbbbbbbbbbbb")
	must(t, err)
	out.Reset()
	must(t, Show(&out, e, nil))
	if n := strings.Count(out.String(), "\n== "); n+1 > MaxShowFiles || !strings.Contains(out.String(), "(2000 more files not shown") {
		t.Fatalf("show named %d files of 3000 (cap %d):\n%s", n+1, MaxShowFiles, out.String()[max(0, out.Len()-300):])
	}
}
