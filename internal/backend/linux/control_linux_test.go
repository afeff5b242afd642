package linux

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestPlanControlPaths(t *testing.T) {
	mk := func(t *testing.T, files map[string]string) string {
		dir := t.TempDir()
		for rel, content := range files {
			p := filepath.Join(dir, rel)
			if content == "/" {
				os.MkdirAll(p, 0o755)
				continue
			}
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(content), 0o644)
		}
		return dir
	}
	tests := []struct {
		name     string
		files    map[string]string
		wantRO   []string // relative to the place
		created  []string // placeholders made
		outsideG bool     // the .git file points outside the place
	}{
		{"repository", map[string]string{".git/HEAD": "ref", ".git/config": "[core]", ".git/hooks/": "/", "a.txt": "x"},
			[]string{".git/hooks", ".git/config"}, nil, false},
		{"repository without hooks or config", map[string]string{".git/HEAD": "ref"},
			[]string{".git/hooks", ".git/config"}, []string{".git/hooks", ".git/config"}, false},
		{"not a repository", map[string]string{"a.txt": "x"},
			[]string{".git"}, []string{".git"}, false},
		{"moat control files", map[string]string{".moat-policy": "p", ".git/HEAD": "ref", ".git/config": "c", ".git/hooks/": "/"},
			[]string{".moat-policy", ".git/hooks", ".git/config"}, nil, false},
		{"submodule git directories", map[string]string{".git/HEAD": "ref", ".git/config": "c", ".git/hooks/": "/",
			".git/modules/sub/HEAD": "ref", ".git/modules/sub/config": "c", ".git/modules/sub/hooks/": "/",
			"sub/.git": "gitdir: ../.git/modules/sub"},
			[]string{".git/hooks", ".git/config", ".git/modules/sub/hooks", ".git/modules/sub/config", "sub/.git"}, nil, false},
		{"nested repository", map[string]string{".git/HEAD": "ref", ".git/config": "c", ".git/hooks/": "/",
			"vendor/x/.git/HEAD": "ref", "vendor/x/.git/config": "c", "vendor/x/.git/hooks/": "/"},
			[]string{".git/hooks", ".git/config", "vendor/x/.git/hooks", "vendor/x/.git/config"}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := mk(t, tt.files)
			cp, err := planControlPaths([]string{w})
			if err != nil {
				t.Fatal(err)
			}
			for _, rel := range tt.wantRO {
				if !slices.Contains(cp.readOnly, filepath.Join(w, rel)) {
					t.Errorf("%s not protected; read-only: %q", rel, cp.readOnly)
				}
				if _, err := os.Lstat(filepath.Join(w, rel)); err != nil {
					t.Errorf("%s has nothing to bind over: %v", rel, err)
				}
			}
			for _, rel := range tt.created {
				if !slices.Contains(cp.created, filepath.Join(w, rel)) {
					t.Errorf("%s: no placeholder recorded; created: %q", rel, cp.created)
				}
			}
			cp.cleanup()
			for _, rel := range tt.created {
				if _, err := os.Lstat(filepath.Join(w, rel)); err == nil {
					t.Errorf("placeholder %s left behind", rel)
				}
			}
			for rel := range tt.files {
				if _, err := os.Lstat(filepath.Join(w, rel)); err != nil {
					t.Errorf("cleanup removed the user's %s", rel)
				}
			}
		})
	}
}

func TestControlPathsWorktreeOutsideThePlace(t *testing.T) {
	main := t.TempDir()
	os.MkdirAll(filepath.Join(main, ".git/worktrees/wt/"), 0o755)
	os.MkdirAll(filepath.Join(main, ".git/hooks"), 0o755)
	os.WriteFile(filepath.Join(main, ".git/config"), []byte("c"), 0o644)
	os.WriteFile(filepath.Join(main, ".git/worktrees/wt/commondir"), []byte("../.."), 0o644)
	os.WriteFile(filepath.Join(main, ".git/worktrees/wt/HEAD"), []byte("ref"), 0o644)
	wt := t.TempDir()
	os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+filepath.Join(main, ".git/worktrees/wt")+"\n"), 0o644)

	// Only the worktree is writable: its shared git directory is not, so
	// nothing there is touched or bound.
	cp, err := planControlPaths([]string{wt})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(wt, ".git")}; !slices.Equal(cp.readOnly, want) {
		t.Errorf("read-only %q, want %q", cp.readOnly, want)
	}
	// Both writable: the main repository's hooks and config are protected
	// once, found through the worktree's commondir.
	cp, err = planControlPaths([]string{wt, main})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(main, ".git/hooks"), filepath.Join(main, ".git/config")} {
		if !slices.Contains(cp.readOnly, p) {
			t.Errorf("%s not protected: %q", p, cp.readOnly)
		}
	}
	cp.cleanup()
}

func TestControlPathsGitLink(t *testing.T) {
	w := t.TempDir()
	real := filepath.Join(w, "real.git")
	os.MkdirAll(filepath.Join(real, "hooks"), 0o755)
	os.WriteFile(filepath.Join(real, "config"), []byte("c"), 0o644)
	os.WriteFile(filepath.Join(real, "HEAD"), []byte("ref"), 0o644)
	if err := os.Symlink("real.git", filepath.Join(w, ".git")); err != nil {
		t.Fatal(err)
	}
	cp, err := planControlPaths([]string{w})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.cleanup()
	if !slices.Equal(cp.links, []string{filepath.Join(w, ".git")}) {
		t.Errorf("links %q: a .git link must be reported, since no mount can pin it", cp.links)
	}
	for _, p := range []string{filepath.Join(real, "hooks"), filepath.Join(real, "config")} {
		if !slices.Contains(cp.readOnly, p) {
			t.Errorf("%s, behind the link, not protected: %q", p, cp.readOnly)
		}
	}
	e := &Engine{policy: Policy{WorkDir: w}, host: HostInfo{Seccomp: true, LandlockABI: 7}, control: cp}
	e.configure(true)
	if len(e.Missing()) == 0 {
		t.Error("a .git link is not reported as missing protection")
	}
}
