package diskwatch

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestWatchDiskBurstAtExit: a burst of files made faster than one poll,
// by a command that then ends, is still reported, by the last sample
// that stop takes; a place that cannot be sampled fails closed, at the
// start (an error) and later (Unmeasured). The controls stay under
// generous limits and report nothing. It runs on a tmpfs of its own
// (quietRoot): what other writers free would offset what it measures.
func TestWatchDiskBurstAtExit(t *testing.T) {
	root, here := quietRoot(t)
	if !here {
		return
	}
	cases := []struct {
		name       string
		files      int
		inodeLimit int64
		remove     bool // remove the root before stop
		want       string
	}{
		{"burst past the inode limit", 200, 100, false, "inodes"},
		{"control: under a generous limit", 20, 100000, false, ""},
		{"a root that disappears is unmeasured", 0, 100000, true, "unmeasured"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(quietDir(t, root), "root")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var got []Exceeded
			stop, err := Watch([]string{dir}, 0, tc.inodeLimit, nil, false, func(e Exceeded) {
				mu.Lock()
				got = append(got, e)
				mu.Unlock()
			}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprint(i)), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tc.remove {
				if err := os.RemoveAll(dir); err != nil {
					t.Fatal(err)
				}
			}
			stop()
			mu.Lock()
			defer mu.Unlock()
			if len(got) > 1 {
				t.Fatalf("reported %d times: %+v", len(got), got)
			}
			switch tc.want {
			case "":
				if len(got) != 0 {
					t.Fatalf("control reported %+v", got)
				}
			case "inodes":
				if len(got) != 1 || !got[0].Inodes || got[0].Used < 100 {
					t.Fatalf("got %+v, want the inode limit passed", got)
				}
			case "unmeasured":
				if len(got) != 1 || !got[0].Unmeasured || got[0].Err == nil {
					t.Fatalf("got %+v, want an unmeasured place", got)
				}
			}
		})
	}
	// A root that cannot be sampled at the start is an error, not a
	// watch that counts nothing.
	if _, err := Watch([]string{quietDir(t, root), "/nonexistent/moat-disk-root"}, 1<<20, 0, nil, false, func(Exceeded) {}, nil); err == nil || !strings.Contains(err.Error(), "/nonexistent/moat-disk-root") {
		t.Fatalf("Watch with an unmeasurable root = %v, want an error naming it", err)
	}
}

// TestWatchSpent: a file that fills the byte limit to within SpentSlack,
// as RLIMIT_FSIZE held to the bytes left stops it, is reported once as
// spent and not as passed; a file of a tenth of the limit is not. The
// measure is the file system's free space, which other writers move: it
// runs on a tmpfs of its own (quietRoot), and each case gets three tries
// where there is none.
func TestWatchSpent(t *testing.T) {
	root, here := quietRoot(t)
	if !here {
		return
	}
	const limit = 4 << 20
	cases := []struct {
		name  string
		size  int
		spent bool
	}{
		{"filled to the limit", limit, true},
		{"control: a tenth of it", limit / 10, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var last string
			for try := 0; try < 3; try++ {
				dir := quietDir(t, root)
				var mu sync.Mutex
				var spent, passed int
				stop, err := Watch([]string{dir}, limit, 0, nil, true, func(Exceeded) {
					mu.Lock()
					passed++
					mu.Unlock()
				}, func(int64) {
					mu.Lock()
					spent++
					mu.Unlock()
				})
				if err != nil {
					t.Fatal(err)
				}
				f := filepath.Join(dir, "f")
				if err := os.WriteFile(f, make([]byte, tc.size), 0o644); err != nil {
					t.Fatal(err)
				}
				fd, _ := os.Open(f)
				fd.Sync()
				fd.Close()
				stop()
				mu.Lock()
				s, p := spent, passed
				mu.Unlock()
				if s > 1 {
					t.Fatalf("spent reported %d times", s)
				}
				if (s == 1) == tc.spent && p == 0 {
					return
				}
				last = fmt.Sprintf("spent %d, passed %d", s, p)
			}
			t.Fatalf("three tries: %s; want spent=%v and never passed", last, tc.spent)
		})
	}
}
