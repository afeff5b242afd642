package linux

import (
	"github.com/moat-sandbox/moat/internal/spec"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
			[]string{".git/hooks", ".git/config"}, []string{".git/hooks", ".git/hooks/" + placeholderMarker, ".git/config"}, false},
		// No placeholder .git: it breaks go build's VCS stamping; a
		// repository created during the run is the close-time check's.
		{"not a repository", map[string]string{"a.txt": "x"}, nil, nil, false},
		{"redirects and attributes", map[string]string{".git/HEAD": "ref", ".git/config": "[include]\n\tpath = ../inc.cfg\n[includeIf \"onbranch:x\"]\n\tpath = if.cfg\n",
			".git/hooks/": "/", ".git/commondir": ".", ".git/info/attributes": "* filter=x", ".git/config.worktree": "c",
			"inc.cfg": "[core]", ".git/if.cfg": "[core]"},
			[]string{".git/hooks", ".git/config", ".git/commondir", ".git/info", ".git/config.worktree", "inc.cfg", ".git/if.cfg"}, nil, false},
		{"bare repository as the place", map[string]string{"HEAD": "ref", "objects/": "/", "refs/": "/", "config": "[core]\n\tbare = true\n", "hooks/": "/"},
			[]string{"hooks", "config"}, nil, false},
		{"bare repository without hooks", map[string]string{"HEAD": "ref", "objects/": "/", "refs/": "/", "config": "c"},
			[]string{"hooks", "config"}, []string{"hooks", "hooks/" + placeholderMarker}, false},
		{"nested bare repository", map[string]string{"a.txt": "x", "srv/r.git/HEAD": "ref", "srv/r.git/objects/": "/", "srv/r.git/refs/": "/", "srv/r.git/config": "c", "srv/r.git/hooks/": "/"},
			[]string{"srv/r.git/hooks", "srv/r.git/config"}, nil, false},
		{"worktree admin directories", map[string]string{".git/HEAD": "ref", ".git/config": "c", ".git/hooks/": "/",
			".git/worktrees/wt/HEAD": "ref", ".git/worktrees/wt/commondir": "../..", ".git/worktrees/wt/gitdir": "/x/.git", ".git/worktrees/wt/config.worktree": "c"},
			[]string{".git/worktrees/wt/commondir", ".git/worktrees/wt/gitdir", ".git/worktrees/wt/config.worktree"}, nil, false},
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
			for _, p := range cp.created {
				if !slices.Contains(tt.created, strings.TrimPrefix(p, w+"/")) {
					t.Errorf("unexpected placeholder %s", p)
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
	// A repository put in the link's place is the close-time check's,
	// as any repository created during the run: reported, not missing.
	e := &Engine{policy: spec.Policy{WorkDir: w}, host: HostInfo{Seccomp: true, LandlockABI: 7}, control: cp}
	e.configure(true)
	for _, m := range e.Missing() {
		if strings.HasPrefix(m, "control paths:") {
			t.Errorf("missing: %s", m)
		}
	}
	found := false
	for _, l := range e.Report().Layers {
		found = found || l.Name == "control-paths" && strings.Contains(l.Detail, "symbolic link")
	}
	if !found {
		t.Errorf("the control-paths layer does not name the .git link: %v", e.Report().Layers)
	}
}

// A placeholder left by a run whose process is dead is swept by the next
// plan; one whose owner runs, or a real hooks directory, is left alone.
func TestControlPlaceholdersSweep(t *testing.T) {
	dead := placeholderPrefix + "999999999 started 12345; removed when that run ends\n"
	tests := []struct {
		name      string
		hooks     map[string]string // hooks/ content
		config    string
		wantHooks []string // hooks/ content afterwards, before cleanup
		swept     bool     // config replaced by this run's own placeholder
	}{
		{"stale", map[string]string{placeholderMarker: dead}, dead, []string{placeholderMarker}, true},
		{"owner alive", map[string]string{placeholderMarker: ownerLine()}, ownerLine(), []string{placeholderMarker}, false},
		{"hooks with more", map[string]string{placeholderMarker: dead, "pre-commit": "#!/bin/sh\n"}, "[core]\n", []string{placeholderMarker, "pre-commit"}, false},
		{"config that says more", map[string]string{}, dead + "[core]\n\tbare = false\n", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := t.TempDir()
			g := filepath.Join(w, ".git")
			os.MkdirAll(filepath.Join(g, "hooks"), 0o755)
			os.WriteFile(filepath.Join(g, "HEAD"), []byte("ref"), 0o644)
			for name, c := range tt.hooks {
				os.WriteFile(filepath.Join(g, "hooks", name), []byte(c), 0o644)
			}
			os.WriteFile(filepath.Join(g, "config"), []byte(tt.config), 0o644)
			cp, err := planControlPaths([]string{w})
			if err != nil {
				t.Fatal(err)
			}
			entries, _ := os.ReadDir(filepath.Join(g, "hooks"))
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if !slices.Equal(names, tt.wantHooks) {
				t.Errorf("hooks/ holds %q, want %q", names, tt.wantHooks)
			}
			b, _ := os.ReadFile(filepath.Join(g, "config"))
			if got := string(b) == ownerLine() && tt.config != ownerLine(); got != tt.swept {
				t.Errorf("config %q: swept %v, want %v", b, got, tt.swept)
			}
			cp.cleanup()
			if tt.swept {
				if exists(filepath.Join(g, "config")) || exists(filepath.Join(g, "hooks")) {
					t.Error("this run's placeholders outlived cleanup")
				}
			} else if !exists(filepath.Join(g, "config")) {
				t.Error("cleanup removed a config it did not make")
			}
		})
	}
}
