//go:build linux

package escape_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// stateOf is the XDG_STATE_HOME that env sets.
func stateOf(t *testing.T, env []string) string {
	t.Helper()
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_STATE_HOME="); ok {
			return v
		}
	}
	t.Fatal("no XDG_STATE_HOME")
	return ""
}

// TestKeptCachesDeepStoreMeasured attacks the stores' size bound: a run
// hides its bulk 40 levels deep in its store (deeper than a walk holding
// a descriptor per level goes), where a measure that stops counts it as
// almost nothing and the prune never retires it. The record must say the
// full size. The control: the same bulk near the top.
func TestKeptCachesDeepStoreMeasured(t *testing.T) {
	t.Parallel()
	const mib = 8
	cases := []struct {
		name  string
		depth int
	}{
		{"near the top (control)", 1},
		{"40 levels deep", 40},
		{"300 levels deep", 300},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env, root, work := cacheSetup(t)
			script := `cd ~/.cache/pip && d=.; i=0; while [ $i -lt "$1" ]; do d=$d/d; i=$((i+1)); done; mkdir -p $d && head -c ` + strconv.Itoa(mib<<20) + ` /dev/zero > $d/big && echo written`
			r := mustRun(t, env, "run", "--workdir", work, "--", "sh", "-c", script, "sh", strconv.Itoa(c.depth))
			if r.Stdout != "written\n" {
				t.Fatalf("the probe did not write: %s", r)
			}
			keys := stores(t, root)
			if len(keys) != 1 {
				t.Fatalf("stores %v", keys)
			}
			b, err := os.ReadFile(filepath.Join(stateOf(t, env), "moat", "cache-homes", keys[0]+".rec"))
			if err != nil {
				t.Fatal(err)
			}
			var rec struct {
				Size    int64 `json:"size"`
				Partial bool  `json:"size_partial"`
			}
			if err := json.Unmarshal(b, &rec); err != nil {
				t.Fatal(err)
			}
			if rec.Size < mib<<20 || rec.Partial {
				t.Fatalf("a store holding %d MiB at depth %d recorded %d bytes, partial %v", mib, c.depth, rec.Size, rec.Partial)
			}
		})
	}
}

// TestKeptCachesRemadeWorkdirStartsEmpty attacks the project identity:
// an untrusted project plants a file in its caches, its directory is
// removed and made again at the same path (ext4 hands back the same
// inode number), and the next project's run must not find the plant. The
// control: the same directory, not re-made, finds it.
func TestKeptCachesRemadeWorkdirStartsEmpty(t *testing.T) {
	t.Parallel()
	env, _, work := cacheSetup(t)
	work = filepath.Join(work, "job")
	if err := os.Mkdir(work, 0o700); err != nil {
		t.Fatal(err)
	}
	mustRun(t, env, "run", "--workdir", work, "--", "sh", "-c", "echo planted > ~/.npm/_cacache/marker")
	probe := []string{"run", "--workdir", work, "--", "sh", "-c", "cat ~/.npm/_cacache/marker 2>/dev/null || echo none"}
	if r := mustRun(t, env, probe...); r.Stdout != "planted\n" {
		t.Fatalf("control: the same directory lost its caches: %s", r)
	}
	var before syscall.Stat_t
	if err := syscall.Stat(work, &before); err != nil {
		t.Fatal(err)
	}
	// Remove it, then make directories until one gets its inode number
	// back (ext4 hands out the lowest free one), putting each other one
	// aside, so the new directory at the path has the old number.
	if err := os.Remove(work); err != nil {
		t.Fatal(err)
	}
	reused := false
	for i := range 200 {
		if err := os.Mkdir(work, 0o700); err != nil {
			t.Fatal(err)
		}
		var now syscall.Stat_t
		if err := syscall.Stat(work, &now); err != nil {
			t.Fatal(err)
		}
		if reused = now.Ino == before.Ino && now.Dev == before.Dev; reused {
			break
		}
		if err := os.Rename(work, work+"-aside-"+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	if !reused {
		t.Skip("PRECONDITION ABSENT: the file system never handed back the inode number in 200 directories; the attack needs it")
	}
	if r := mustRun(t, env, probe...); r.Stdout != "none\n" {
		t.Fatalf("a re-made directory with the old inode number got the old project's caches: %s", r)
	}
}

// TestKeptCachesOtherCacheHomeHidden attacks the hiding of the stores
// from a run whose XDG_CACHE_HOME differs from the run that made them,
// with a grant over the first cache directory: it must neither list the
// stores nor read one. The control: a file beside them in the granted
// directory is read.
func TestKeptCachesOtherCacheHomeHidden(t *testing.T) {
	t.Parallel()
	d := cacheScratch(t)
	env, root, work := cacheSetupIn(t, d)
	mustRun(t, env, "run", "--workdir", work, "--", "sh", "-c", "echo secret-cache > ~/.cache/go-build/m")
	keys := stores(t, root)
	if len(keys) != 1 {
		t.Fatalf("stores %v", keys)
	}
	first := filepath.Join(d, "cache")
	if err := os.WriteFile(filepath.Join(first, "beside"), []byte("beside-read\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	other := append([]string{"XDG_CACHE_HOME=" + filepath.Join(d, "cache2")}, env[1:]...)
	if !strings.HasPrefix(env[1], "XDG_STATE_HOME=") {
		t.Fatalf("env %v", env)
	}
	probe := `ls "$1/moat/homes" 2>/dev/null | grep -q ` + keys[0] + ` && echo listed; cat "$1/moat/homes/` + keys[0] + `/go-build/m" 2>/dev/null; cat "$1/beside"`
	r := mustRun(t, other, "run", "--workdir", work, "--readable", first, "--", "sh", "-c", probe, "sh", first)
	if strings.Contains(r.Stdout, "listed") || strings.Contains(r.Stdout, "secret-cache") {
		t.Errorf("a run with another XDG_CACHE_HOME saw the first one's stores: %s", r)
	}
	if !strings.Contains(r.Stdout, "beside-read\n") {
		t.Errorf("control: the granted directory was not readable: %s", r)
	}
}
