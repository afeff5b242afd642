//go:build unix

package cachehome

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testLayout is a layout in a fresh temporary directory.
func testLayout(t *testing.T) Layout {
	t.Helper()
	d := t.TempDir()
	return Layout{Root: filepath.Join(d, "cache", "moat", "homes"), Records: filepath.Join(d, "state", "cache-homes")}
}

func testProject(t *testing.T) Project {
	t.Helper()
	return Project{Path: "/project", Dev: 1, Ino: 2}
}

func TestOpenKeys(t *testing.T) {
	l := testLayout(t)
	base := testProject(t)
	a, err := Open(l, base, "policy-a")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(0)
	cases := []struct {
		name    string
		project Project
		policy  string
		busy    bool
	}{
		{"same project and policy", base, "policy-a", true},
		{"another policy", base, "policy-b", false},
		{"the directory made again (another inode)", Project{Path: base.Path, Dev: 1, Ino: 3}, "policy-a", false},
		{"another path", Project{Path: "/other", Dev: 1, Ino: 2}, "policy-a", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := Open(l, c.project, c.policy)
			if c.busy {
				if !errors.Is(err, ErrBusy) {
					t.Fatalf("Open = %v, want ErrBusy while the first run holds the key", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close(0)
			if b.Key() == a.Key() {
				t.Fatalf("key %s shared with the first run", b.Key())
			}
			for i, s := range b.Stores() {
				if s == a.Stores()[i] {
					t.Fatalf("store %s shared", s)
				}
			}
		})
	}
	// Released, the key opens again, with the same stores.
	stores := a.Stores()
	if err := a.Close(0); err != nil {
		t.Fatal(err)
	}
	again, err := Open(l, base, "policy-a")
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	defer again.Close(0)
	if strings.Join(again.Stores(), " ") != strings.Join(stores, " ") {
		t.Fatalf("stores changed: %v, then %v", stores, again.Stores())
	}
}

func TestLinkPlacesEveryCache(t *testing.T) {
	l := testLayout(t)
	lease, err := Open(l, testProject(t), "p")
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Close(0)
	home := t.TempDir()
	if err := lease.Link(home); err != nil {
		t.Fatal(err)
	}
	for i, d := range Dirs {
		got, err := os.Readlink(filepath.Join(home, d.Rel))
		if err != nil || got != lease.Stores()[i] {
			t.Errorf("%s: link to %q (%v), want %q", d.Rel, got, err, lease.Stores()[i])
		}
	}
}

func TestCloseRecordsSize(t *testing.T) {
	l := testLayout(t)
	lease, err := Open(l, testProject(t), "p")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lease.Stores()[0], "blob"), make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := lease.Close(0); err != nil {
		t.Fatal(err)
	}
	r, err := readRecord(l.Records, lease.Key())
	if err != nil {
		t.Fatal(err)
	}
	if r.Size < 1<<20 || r.SizePartial || r.WorkDir != "/project" || time.Since(r.LastUse) > time.Minute {
		t.Fatalf("record %+v: want at least 1 MiB, complete, the project, used now", r)
	}
}

// ageRecord makes key's record say it was last used at when, with size.
func ageRecord(t *testing.T, l Layout, key string, when time.Time, size int64) {
	t.Helper()
	r, err := readRecord(l.Records, key)
	if err != nil {
		t.Fatal(err)
	}
	r.LastUse, r.Size = when, size
	if err := writeRecord(l.Records, r); err != nil {
		t.Fatal(err)
	}
}

// released opens and closes a store of policy, returning its key and
// store paths.
func released(t *testing.T, l Layout, policy string) (string, []string) {
	t.Helper()
	lease, err := Open(l, testProject(t), policy)
	if err != nil {
		t.Fatal(err)
	}
	if err := lease.Close(0); err != nil {
		t.Fatal(err)
	}
	return lease.Key(), lease.Stores()
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func TestPruneBounds(t *testing.T) {
	now := time.Now()
	cases := []struct {
		name  string
		ages  []time.Duration // per store: how long unused
		sizes []int64
		b     Bounds
		gone  []bool
	}{
		{"over age goes, recent stays", []time.Duration{31 * 24 * time.Hour, time.Hour}, []int64{0, 0}, Bounds{}, []bool{true, false}},
		{"under both bounds nothing goes", []time.Duration{time.Hour, 2 * time.Hour}, []int64{10, 10}, Bounds{}, []bool{false, false}},
		{"over size: least recently used goes", []time.Duration{time.Hour, 2 * time.Hour, 3 * time.Hour}, []int64{40, 40, 40}, Bounds{MaxBytes: 100}, []bool{false, false, true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := testLayout(t)
			var keys []string
			for i := range c.ages {
				k, _ := released(t, l, "p"+string(rune('a'+i)))
				ageRecord(t, l, k, now.Add(-c.ages[i]), c.sizes[i])
				keys = append(keys, k)
			}
			res, err := Prune(l, c.b, now)
			if err != nil {
				t.Fatal(err)
			}
			if res.Unfinished {
				t.Fatal("prune of empty stores unfinished")
			}
			for i, k := range keys {
				if got := !exists(filepath.Join(l.Root, k)); got != c.gone[i] {
					t.Errorf("store %d gone = %v, want %v", i, got, c.gone[i])
				}
				if got := !exists(filepath.Join(l.Records, k+recordSuffix)); got != c.gone[i] {
					t.Errorf("record %d gone = %v, want %v", i, got, c.gone[i])
				}
			}
			if ents, _ := os.ReadDir(filepath.Join(l.Root, trashName)); len(ents) != 0 {
				t.Errorf("trash not emptied: %d entries", len(ents))
			}
		})
	}
}

// TestPruneSkipsHeldStore: a store a run holds is never retired, however
// old its record says it is.
func TestPruneSkipsHeldStore(t *testing.T) {
	l := testLayout(t)
	lease, err := Open(l, testProject(t), "p")
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Close(0)
	ageRecord(t, l, lease.Key(), time.Now().Add(-365*24*time.Hour), 0)
	if _, err := Prune(l, Bounds{}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if !exists(lease.Stores()[0]) {
		t.Fatal("a held store was pruned")
	}
	lease.Close(0)
	ageRecord(t, l, lease.Key(), time.Now().Add(-365*24*time.Hour), 0)
	if _, err := Prune(l, Bounds{}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if exists(lease.Stores()[0]) {
		t.Fatal("control: the released, over-age store was not pruned")
	}
}

// TestPruneOrphanStore: a store directory with no record (a crash, or made
// by hand) is retired.
func TestPruneOrphanStore(t *testing.T) {
	l := testLayout(t)
	k, stores := released(t, l, "p")
	if err := os.Remove(filepath.Join(l.Records, k+recordSuffix)); err != nil {
		t.Fatal(err)
	}
	if _, err := Prune(l, Bounds{}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if exists(stores[0]) {
		t.Fatal("orphan store kept")
	}
}

// TestOpenRepairsStoreModes: a run that closed its store to itself (a
// sandbox may chmod what it owns) does not break the next run's caches.
func TestOpenRepairsStoreModes(t *testing.T) {
	l := testLayout(t)
	_, stores := released(t, l, "p")
	for _, s := range stores {
		if err := os.Chmod(s, 0); err != nil {
			t.Fatal(err)
		}
	}
	lease, err := Open(l, testProject(t), "p")
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Close(0)
	for _, s := range lease.Stores() {
		if fi, err := os.Stat(s); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, %v; want 0700", s, fi.Mode(), err)
		}
	}
}
