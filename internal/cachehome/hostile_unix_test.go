//go:build unix

package cachehome

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// withDeadline runs f and fails the test if it does not return within d:
// a walk that opened a FIFO would block for ever.
func withDeadline(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %v", what, d)
	}
}

// TestPruneHostileStore plants what a sandbox can leave in its store and
// checks that measuring and pruning it neither follows, blocks, nor stops:
// the store goes, and nothing outside it is touched.
func TestPruneHostileStore(t *testing.T) {
	cases := []struct {
		name  string
		plant func(t *testing.T, store, outside string)
		// control shows the attack is real before the prune; nil when
		// the plant needs none.
		control func(t *testing.T, store, outside string)
		// refused says a run must refuse to take the store up again.
		refused bool
	}{
		{"links to a file and a directory outside", func(t *testing.T, store, outside string) {
			must(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(store, "file-link")))
			must(t, os.Symlink(outside, filepath.Join(store, "dir-link")))
			must(t, os.MkdirAll(filepath.Join(store, "a", "b"), 0o700))
			must(t, os.Symlink(outside, filepath.Join(store, "a", "b", "deep-link")))
		}, func(t *testing.T, store, outside string) {
			b, err := os.ReadFile(filepath.Join(store, "dir-link", "secret"))
			if err != nil || string(b) != "keep me" {
				t.Fatalf("control: the outside file is not reachable through the link: %q, %v", b, err)
			}
		}, false},
		{"the store directory itself a link outside", func(t *testing.T, store, outside string) {
			must(t, os.RemoveAll(store))
			must(t, os.Symlink(outside, store))
		}, func(t *testing.T, store, outside string) {
			if _, err := os.Stat(filepath.Join(store, "secret")); err != nil {
				t.Fatalf("control: the outside file is not reachable through the store: %v", err)
			}
		}, true},
		{"FIFOs", func(t *testing.T, store, outside string) {
			must(t, unix.Mkfifo(filepath.Join(store, "fifo"), 0o600))
			must(t, os.MkdirAll(filepath.Join(store, "sub"), 0o700))
			must(t, unix.Mkfifo(filepath.Join(store, "sub", "fifo"), 0o000))
		}, nil, false},
		{"a socket", func(t *testing.T, store, outside string) {
			must(t, unix.Mknod(filepath.Join(store, "sock"), unix.S_IFSOCK|0o600, 0))
		}, nil, false},
		{"read-only directories and files, as the Go module cache leaves them", func(t *testing.T, store, outside string) {
			plantReadOnly(t, store)
		}, func(t *testing.T, store, outside string) {
			if os.Geteuid() == 0 {
				return // root's removal ignores modes: nothing to show
			}
			c := filepath.Join(outside, "control")
			must(t, os.Mkdir(c, 0o700))
			plantReadOnly(t, c)
			if err := os.RemoveAll(c); err == nil {
				t.Fatal("control: a plain RemoveAll removed the read-only tree, so the case shows nothing")
			}
			makeWritable(t, c)
		}, false},
		{"a tree deeper than PATH_MAX", func(t *testing.T, store, outside string) {
			plantDeep(t, store, 2100) // 2100 × "d/" is over 4096 bytes
		}, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := testLayout(t)
			k, stores := released(t, l, "p")
			outside := t.TempDir()
			must(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("keep me"), 0o600))
			c.plant(t, stores[0], outside)
			if c.control != nil {
				c.control(t, stores[0], outside)
			}
			withDeadline(t, 60*time.Second, "measure", func() {
				lease, err := Open(l, testProject(t), "p")
				if c.refused {
					if err == nil {
						lease.Close(0)
						t.Error("a run took up a store that is a link")
					}
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				if err := lease.Close(0); err != nil {
					t.Error(err)
				}
			})
			ageRecord(t, l, k, time.Now().Add(-100*24*time.Hour), 0)
			var res PruneResult
			var err error
			withDeadline(t, 60*time.Second, "prune", func() { res, err = Prune(l, Bounds{}, time.Now()) })
			if err != nil || res.Unfinished {
				t.Fatalf("Prune = %+v, %v", res, err)
			}
			if exists(filepath.Join(l.Root, k)) {
				t.Fatal("store kept")
			}
			if ents, _ := os.ReadDir(filepath.Join(l.Root, trashName)); len(ents) != 0 {
				t.Fatalf("trash not emptied: %v", ents)
			}
			b, err := os.ReadFile(filepath.Join(outside, "secret"))
			if err != nil || !bytes.Equal(b, []byte("keep me")) {
				t.Fatalf("the file outside the store changed: %q, %v", b, err)
			}
		})
	}
}

// TestPruneBudget: a store of 100,000 files goes over several prunes, none
// of which does more than its budget of work.
func TestPruneBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("makes 100,000 files; skipped in -short mode")
	}
	l := testLayout(t)
	k, stores := released(t, l, "p")
	const dirs, perDir = 100, 1000
	for i := range dirs {
		d := filepath.Join(stores[0], strconv.Itoa(i))
		must(t, os.Mkdir(d, 0o700))
		for j := range perDir {
			f, err := os.Create(filepath.Join(d, strconv.Itoa(j)))
			must(t, err)
			f.Close()
		}
	}
	ageRecord(t, l, k, time.Now().Add(-100*24*time.Hour), 0)
	const budget = 20_000
	total := dirs*perDir + dirs + len(Dirs) + 1
	left := total
	calls := 0
	for {
		calls++
		if calls > total/budget+3 {
			t.Fatalf("%d prunes and still unfinished", calls)
		}
		var res PruneResult
		var err error
		start := time.Now()
		withDeadline(t, 120*time.Second, "prune", func() { res, err = Prune(l, Bounds{Budget: budget}, time.Now()) })
		if err != nil {
			t.Fatal(err)
		}
		now := countTrash(t, l)
		if left-now > budget {
			t.Fatalf("prune %d removed %d entries, over its budget of %d", calls, left-now, budget)
		}
		t.Logf("prune %d: %d entries left, %v", calls, now, time.Since(start).Round(time.Millisecond))
		left = now
		if !res.Unfinished {
			break
		}
	}
	if calls < 2 {
		t.Fatal("control: one prune removed 100,000 files, so the budget held nothing back")
	}
	if left != 0 {
		t.Fatalf("%d entries left in the trash", left)
	}
}

func countTrash(t *testing.T, l Layout) int {
	n := 0
	filepath.WalkDir(filepath.Join(l.Root, trashName), func(p string, d os.DirEntry, err error) error {
		if err == nil {
			n++
		}
		return nil
	})
	if n > 0 {
		n-- // the trash itself
	}
	return n
}

func plantReadOnly(t *testing.T, dir string) {
	t.Helper()
	m := filepath.Join(dir, "mod@v1.0.0")
	must(t, os.MkdirAll(filepath.Join(m, "sub"), 0o700))
	must(t, os.WriteFile(filepath.Join(m, "go.mod"), []byte("module m\n"), 0o444))
	must(t, os.WriteFile(filepath.Join(m, "sub", "a.go"), []byte("package sub\n"), 0o444))
	must(t, os.Mkdir(filepath.Join(m, "closed"), 0o700))
	must(t, os.WriteFile(filepath.Join(m, "closed", "f"), nil, 0o600))
	must(t, os.Chmod(filepath.Join(m, "closed"), 0))
	must(t, os.Chmod(filepath.Join(m, "sub"), 0o555))
	must(t, os.Chmod(m, 0o555))
}

func makeWritable(t *testing.T, dir string) {
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	os.Chmod(filepath.Join(dir, "mod@v1.0.0", "closed"), 0o700)
	if err := os.RemoveAll(dir); err != nil {
		t.Logf("control tree: %v", err)
	}
}

// plantDeep makes a chain of depth directories named d in dir, with a
// file at the bottom, by descriptor (the path is longer than PATH_MAX).
func plantDeep(t *testing.T, dir string, depth int) {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	must(t, err)
	for range depth {
		must(t, unix.Mkdirat(fd, "d", 0o700))
		next, err := unix.Openat(fd, "d", unix.O_RDONLY|unix.O_DIRECTORY, 0)
		must(t, err)
		unix.Close(fd)
		fd = next
	}
	f, err := unix.Openat(fd, "bottom", unix.O_CREAT|unix.O_WRONLY, 0o600)
	must(t, err)
	unix.Close(f)
	unix.Close(fd)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestCloseMeasuresDeepStore attacks the size bound: a store that hides
// its bulk far below any fixed depth, or behind more entries than the
// measure may read, must not count as small. The first is measured in
// full; the second is recorded partial, and the next prune retires it
// though it is recent and under the size bound. The control: a complete
// store beside them stays.
func TestCloseMeasuresDeepStore(t *testing.T) {
	l := testLayout(t)
	const n = 2 << 20
	cases := []struct {
		name    string
		policy  string
		budget  int
		partial bool
	}{
		{"deep store, default budget: measured in full", "deep", 0, false},
		{"deep store, short budget: partial", "short", 20, true},
	}
	keys := map[string]string{}
	for _, c := range cases {
		lease, err := Open(l, testProject(t), c.policy)
		if err != nil {
			t.Fatal(err)
		}
		deep := lease.Stores()[0]
		for i := 0; i < 100; i++ {
			deep = filepath.Join(deep, "d")
		}
		must(t, os.MkdirAll(deep, 0o700))
		must(t, os.WriteFile(filepath.Join(deep, "big"), make([]byte, n), 0o600))
		must(t, lease.Close(c.budget))
		r, err := readRecord(l.Records, lease.Key())
		must(t, err)
		if r.SizePartial != c.partial || (!c.partial && r.Size < n) {
			t.Errorf("%s: record size %d, partial %v", c.name, r.Size, r.SizePartial)
		}
		keys[c.policy] = lease.Key()
	}
	control, _ := released(t, l, "control")
	if _, err := Prune(l, Bounds{}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if exists(filepath.Join(l.Root, keys["short"])) {
		t.Error("a store measured partial survived the prune")
	}
	for _, k := range []string{keys["deep"], control} {
		if !exists(filepath.Join(l.Root, k)) {
			t.Errorf("control: a store measured in full and under the bounds was retired")
		}
	}
}
