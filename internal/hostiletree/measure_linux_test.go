package hostiletree

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// deepFile plants a file of n bytes (written, so it takes disk) under a
// chain of depth directories, the chain's directories 0500.
func deepFile(t testing.TB, dir string, depth, n int) {
	deep := dir
	for i := 0; i < depth; i++ {
		deep = filepath.Join(deep, "d")
	}
	if err := os.MkdirAll(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(deep, "big"), make([]byte, n), 0o600); err != nil {
		t.Fatal(err)
	}
	for d := deep; d != dir; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o500); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMeasureNotFooledByDepth attacks the measure the way a sandbox would
// hide a store's size: a file far below where a walk holding a descriptor
// per level stops (maxDepth), and past PATH_MAX. The control is the same
// file near the top. An exhausted budget says incomplete.
func TestMeasureNotFooledByDepth(t *testing.T) {
	const n = 4 << 20
	cases := []struct {
		name     string
		plant    func(t *testing.T, dir string)
		budget   int
		min      int64
		complete bool
	}{
		{"shallow (control)", func(t *testing.T, d string) { deepFile(t, d, 1, n) }, 1000, n, true},
		{"past maxDepth", func(t *testing.T, d string) { deepFile(t, d, maxDepth+8, n) }, 1000, n, true},
		{"1000 levels", func(t *testing.T, d string) { deepFile(t, d, 1000, n) }, 5000, n, true},
		{"past PATH_MAX, locked, FIFO and socket", func(t *testing.T, d string) { longChain(t, d) }, 1000, 0, true},
		{"locked modes", func(t *testing.T, d string) { lockedDirs(t, d) }, 1000, 0, true},
		{"budget short of the tree", func(t *testing.T, d string) { deepFile(t, d, 1000, n) }, 500, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := t.TempDir()
			c.plant(t, d)
			t.Cleanup(func() { b := 1 << 20; _ = EmptyTrash(d, &b) })
			size, complete := Measure(d, c.budget)
			if complete != c.complete || size < c.min {
				t.Fatalf("Measure = %d, %v; want at least %d, complete %v", size, complete, c.min, c.complete)
			}
		})
	}
}

// TestMeasureLinksNotFollowed: a link to a large tree counts as the link;
// the control measures the tree itself.
func TestMeasureLinksNotFollowed(t *testing.T) {
	d := t.TempDir()
	outside := t.TempDir()
	must(t, os.WriteFile(filepath.Join(outside, "big"), make([]byte, 4<<20), 0o600))
	must(t, os.Symlink(outside, filepath.Join(d, "link")))
	size, complete := Measure(d, 100)
	if !complete || size >= 4<<20 {
		t.Fatalf("Measure = %d, %v: a link was followed", size, complete)
	}
	size, _ = Measure(outside, 100)
	if size < 4<<20 {
		t.Fatalf("control: the file itself measures %d", size)
	}
}

// BenchmarkMeasure200k measures a tree shaped like a large Go module
// cache: 200,000 files in 2,000 directories of 100, under 20 of 100.
func BenchmarkMeasure200k(b *testing.B) {
	d := b.TempDir()
	for i := 0; i < 20; i++ {
		for j := 0; j < 100; j++ {
			sub := filepath.Join(d, strconv.Itoa(i), strconv.Itoa(j))
			if err := os.MkdirAll(sub, 0o700); err != nil {
				b.Fatal(err)
			}
			for k := 0; k < 100; k++ {
				fd, err := unix.Open(filepath.Join(sub, strconv.Itoa(k)), unix.O_CREAT|unix.O_WRONLY, 0o600)
				if err != nil {
					b.Fatal(err)
				}
				unix.Close(fd)
			}
		}
	}
	b.ResetTimer()
	for range b.N {
		if _, complete := Measure(d, 1_000_000); !complete {
			b.Fatal("incomplete")
		}
	}
}
