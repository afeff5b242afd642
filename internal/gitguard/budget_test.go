package gitguard

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A config that includes itself many times over, directly and through a
// chain, is walked once per file: a snapshot takes well under a second.
// Before, 7 such lines took minutes (each level re-expanded every line).
func TestIncludeCycleIsLinear(t *testing.T) {
	for _, n := range []int{1, 7, 20, 200} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			w := t.TempDir()
			var b strings.Builder
			b.WriteString("[core]\n\tbare = false\n")
			for i := 0; i < n; i++ {
				fmt.Fprintf(&b, "[includeIf \"gitdir:/nonexistent-%d/\"]\n\tpath = config\n[include]\n\tpath = ../inc%d.cfg\n", i, i%3)
			}
			tree(t, w, merge(repo(".git/"), map[string]string{".git/config": b.String(),
				"inc0.cfg": "[include]\n\tpath = inc1.cfg\n\tpath = .git/config\n", "inc1.cfg": "[include]\n\tpath = inc2.cfg\n", "inc2.cfg": "[include]\n\tpath = inc0.cfg\n"}))
			start := time.Now()
			s := Take([]string{w})
			if d := time.Since(start); d > 2*time.Second {
				t.Fatalf("Take took %v", d)
			}
			for _, f := range []string{"inc0.cfg", "inc1.cfg", "inc2.cfg"} {
				if _, ok := s.paths[filepath.Join(w, f)]; !ok {
					t.Errorf("%s was not followed", f)
				}
			}
		})
	}
}

// The include bound: at it every file is followed and nothing is unsure;
// one past it, the config is unsure and Close sets it aside (with its
// original put back, since it was kept).
func TestIncludeBudget(t *testing.T) {
	defer func(n int) { includeBudget = n }(includeBudget)
	includeBudget = 5
	for _, n := range []int{5, 6} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			w := t.TempDir()
			var b strings.Builder
			files := map[string]string{}
			for i := 0; i < n; i++ {
				fmt.Fprintf(&b, "[include]\n\tpath = ../i%d.cfg\n", i)
				files[fmt.Sprintf("i%d.cfg", i)] = "[user]\n\tname = x\n"
			}
			files[".git/config"] = b.String()
			tree(t, w, merge(repo(".git/"), files))
			snap := Take([]string{w})
			unsure := snap.paths[filepath.Join(w, ".git/config")].unsure
			if (n > includeBudget) != (unsure != "") {
				t.Fatalf("%d includes under a bound of %d: unsure %q", n, includeBudget, unsure)
			}
			found := snap.Check(sfx)
			if moved := len(found) > 0; moved != (n > includeBudget) {
				t.Errorf("%d includes: findings %q", n, found)
			}
		})
	}
}

// Includes nested deeper than git's own limit leave the config unsure.
func TestIncludeDepth(t *testing.T) {
	w := t.TempDir()
	files := map[string]string{".git/config": "[include]\n\tpath = ../d0.cfg\n"}
	for i := 0; i < maxIncludeDepth+2; i++ {
		files[fmt.Sprintf("d%d.cfg", i)] = fmt.Sprintf("[include]\n\tpath = d%d.cfg\n", i+1)
	}
	tree(t, w, merge(repo(".git/"), files))
	snap := Take([]string{w})
	var unsure int
	for _, st := range snap.paths {
		if st.unsure != "" {
			unsure++
		}
	}
	if unsure != 1 {
		t.Errorf("%d unsure paths, want the one at the depth bound", unsure)
	}
}

// Hard links of one inode are hashed once, and past the byte budget a
// hook is unsure, so Close sets it aside rather than calling it clean.
func TestHashBudget(t *testing.T) {
	defer func(n int64) { hashBudget = n }(hashBudget)
	w := t.TempDir()
	tree(t, w, repo(".git/"))
	big := filepath.Join(w, ".git/hooks/h0")
	if err := os.WriteFile(big, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, maxHash); err != nil { // sparse
		t.Fatal(err)
	}
	for i := 1; i < 1000; i++ {
		if err := os.Link(big, filepath.Join(w, fmt.Sprintf(".git/hooks/h%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	hashBudget = maxHash + 1024 // one large inode's worth, and the small files
	start := time.Now()
	snap := Take([]string{w})
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("1000 links of one %d-byte file took %v", maxHash, d)
	}
	for p, st := range snap.paths {
		if st.unsure != "" {
			t.Fatalf("%s is unsure at the bound: %s", p, st.unsure)
		}
	}
	if found := snap.Check(sfx); len(found) != 0 {
		t.Fatalf("nothing changed, yet: %q", found)
	}
	// One byte past the budget: a second inode of the same size.
	hashBudget = maxHash + 1024
	other := filepath.Join(w, ".git/hooks/other")
	if err := os.WriteFile(other, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(other, maxHash); err != nil {
		t.Fatal(err)
	}
	snap = Take([]string{w})
	if snap.paths[other].unsure == "" && snap.paths[big].unsure == "" {
		t.Fatal("two inodes hashed under a budget of one")
	}
	found := snap.Check(sfx)
	if len(found) == 0 {
		t.Fatal("a hook past the budget was taken for clean")
	}
}

// The name bound: hard links cost names, not the scan. A directory with
// more names than the old single budget still has its neighbours'
// repositories found; past the name bound the place is reported.
func TestNameBudgetPerType(t *testing.T) {
	defer func(n, d int) { entryBudget, dirBudget = n, d }(entryBudget, dirBudget)
	w := t.TempDir()
	tree(t, w, map[string]string{"many/f": "x"})
	for i := 0; i < 300; i++ {
		if err := os.Link(filepath.Join(w, "many/f"), filepath.Join(w, fmt.Sprintf("l%03d", i))); err != nil {
			t.Fatal(err)
		}
	}
	entryBudget, dirBudget = 400, 10
	snap := Take([]string{w})
	if snap.incomplete[w] != "" {
		t.Fatalf("cut at %d names: %s", entryBudget, snap.incomplete[w])
	}
	tree(t, w, merge(repo("evil/.git/"), map[string]string{".moat-write": "/\n"}))
	found := snap.Check(sfx)
	for _, rel := range []string{"evil/.git/config", ".moat-write"} {
		if _, err := os.Lstat(filepath.Join(w, rel+sfx)); err != nil {
			t.Errorf("%s not set aside: %q", rel, found)
		}
	}
	entryBudget = 300 // just past: the top alone has 302 names
	if s := Take([]string{w}); !strings.Contains(s.incomplete[w], "more than 300 entries") {
		t.Errorf("a scan past the name bound is not reported: %q", s.incomplete)
	}
	entryBudget, dirBudget = 4000, 2
	if s := Take([]string{w}); !strings.Contains(s.incomplete[w], "more than 2 directories") {
		t.Errorf("a scan past the directory bound is not reported: %q", s.incomplete)
	}
}

// A control directory is listed in memory only up to maxSmallDir entries:
// at the bound its files are compared one by one; one past it, the
// directory is unsure and Close sets it aside whole.
func TestSmallDirBound(t *testing.T) {
	for _, n := range []int{maxSmallDir, maxSmallDir + 1} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			w := t.TempDir()
			tree(t, w, repo(".git/"))
			for i := 0; i < n; i++ {
				if err := os.WriteFile(filepath.Join(w, ".git/hooks", fmt.Sprint(i)), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			snap := Take([]string{w})
			unsure := snap.paths[filepath.Join(w, ".git/hooks")].unsure != ""
			if unsure != (n > maxSmallDir) {
				t.Fatalf("%d entries: unsure %v", n, unsure)
			}
			found := snap.Check(sfx)
			if (len(found) > 0) != (n > maxSmallDir) {
				t.Errorf("%d entries: findings %q", n, found)
			}
		})
	}
}

// The directory budget after a run covers what the run could make: as
// many directories as the start saw plus the sandbox's inode limit
// (SetCreatable). A repository past MaxDirs new directories is then
// found and set aside; without the bound (the control) the scan is cut,
// only reported, and the repository stays; with a bound the run exceeded
// the report names --disk-inodes.
func TestDirBudgetCoversCreatable(t *testing.T) {
	defer func(d int) { dirBudget = d }(dirBudget)
	dirBudget = 50
	for _, tc := range []struct {
		name      string
		creatable int64
		found     bool
	}{{"no bound known", 0, false}, {"inode limit 300", 300, true}, {"inode limit 100", 100, false}} {
		t.Run(tc.name, func(t *testing.T) {
			w := t.TempDir()
			for i := 0; i < 10; i++ {
				tree(t, w, map[string]string{fmt.Sprintf("old%d/f", i): "x"})
			}
			snap := Take([]string{w})
			snap.SetCreatable(tc.creatable)
			for i := 0; i < 150; i++ {
				if err := os.MkdirAll(filepath.Join(w, "a", fmt.Sprint(i)), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			tree(t, w, repo("z/y/sub/.git/"))
			found := snap.Check(sfx)
			_, err := os.Lstat(filepath.Join(w, "z/y/sub/.git/config"+sfx))
			if tc.found != (err == nil) {
				t.Fatalf("set aside %v, want %v: %q", err == nil, tc.found, found)
			}
			if !tc.found {
				s := fmt.Sprint(found)
				if !strings.Contains(s, "not checked") || tc.creatable > 0 && !strings.Contains(s, "--disk-inodes") {
					t.Fatalf("the cut is not reported as wanted: %q", found)
				}
			}
		})
	}
}
