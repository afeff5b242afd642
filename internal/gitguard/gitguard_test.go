package gitguard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tree writes files (a trailing "/" makes a directory, "->x" a link to x)
// under dir.
func tree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.HasSuffix(rel, "/"):
			err := os.MkdirAll(p, 0o755)
			if err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(content, "->"):
			if err := os.Symlink(content[2:], p); err != nil {
				t.Fatal(err)
			}
		default:
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// repo is a minimal git directory's entries under prefix.
func repo(prefix string) map[string]string {
	return map[string]string{
		prefix + "HEAD": "ref: refs/heads/main\n", prefix + "objects/": "", prefix + "refs/": "",
		prefix + "config": "[core]\n\tbare = false\n", prefix + "hooks/": "",
	}
}

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

const sfx = ".moat-quarantine-test"

func TestCheck(t *testing.T) {
	tests := []struct {
		name   string
		before map[string]string
		run    map[string]string // what the "sandbox" writes
		edit   func(t *testing.T, w string)
		moved  []string // paths (relative) that must now be at path+sfx
		kept   []string // paths that must still be there, unchanged
		gone   []string // paths that must not exist any more
		want   int      // findings
	}{
		{name: "nothing happens", before: merge(repo(".git/"), map[string]string{"a.txt": "x"}), want: 0, kept: []string{".git/config"}},
		{name: "plain files are not control paths", before: repo(".git/"),
			run:  map[string]string{"src/main.go": "package main", ".gitattributes": "* filter=x", ".gitmodules": "[submodule]"},
			kept: []string{"src/main.go", ".gitattributes", ".gitmodules"}, want: 0},
		{name: "new repository in a subdirectory", before: map[string]string{"a.txt": "x"},
			run:   merge(repo("sub/.git/"), map[string]string{"sub/.git/hooks/post-checkout": "#!/bin/sh\n"}),
			moved: []string{"sub/.git/config", "sub/.git/hooks"}, kept: []string{"sub/.git", "sub/.git/HEAD", "sub/.git/objects"},
			gone: []string{"sub/.git/hooks"}, want: 3, edit: func(t *testing.T, w string) {}},
		{name: "a decoy git directory hides nothing below it", before: repo(".git/"),
			run: merge(map[string]string{"HEAD": "ref: refs/heads/main\n", "objects/": "", "refs/": "", ".git/commondir": "../evil\n"},
				repo("evil/"), repo("sub/.git/")),
			moved: []string{".git/commondir", "evil/config", "evil/hooks", "sub/.git/config", "sub/.git/hooks"}, kept: []string{".git/config", "sub/.git"}, want: 6},
		{name: "new repository at the top", before: map[string]string{"go.mod": "module x\n"},
			run: repo(".git/"), moved: []string{".git/config", ".git/hooks"}, kept: []string{".git", ".git/refs"}, want: 3},
		{name: "commondir added", before: repo(".git/"),
			run:   merge(map[string]string{".git/commondir": "../evil\n"}, repo("evil/")),
			moved: []string{".git/commondir", "evil/config", "evil/hooks"}, kept: []string{".git/config"}, want: 3},
		{name: ".git file to a hidden git dir", before: map[string]string{"a.txt": "x"},
			run:   merge(map[string]string{"sub/.git": "gitdir: ../.hidden\n"}, repo(".hidden/")),
			moved: []string{"sub/.git", ".hidden/config", ".hidden/hooks"}, want: 3},
		{name: ".git link created", before: map[string]string{"a.txt": "x"},
			run: map[string]string{".git": "->/nonexistent-moat-target"}, moved: []string{".git"}, want: 1},
		{name: "hook in a bare repository", before: repo(""),
			run: map[string]string{"hooks/pre-receive": "#!/bin/sh\n"}, moved: []string{"hooks/pre-receive"}, kept: []string{"hooks"}, want: 1},
		{name: "bare repository created", before: map[string]string{"a.txt": "x"},
			run: repo("evil.git/"), moved: []string{"evil.git/config", "evil.git/hooks"}, want: 2},
		{name: "info/attributes", before: repo(".git/"),
			run: map[string]string{".git/info/attributes": "* filter=evil\n"}, moved: []string{".git/info"}, want: 1},
		{name: "info/attributes in an existing info", before: merge(repo(".git/"), map[string]string{".git/info/exclude": "x\n"}),
			run: map[string]string{".git/info/attributes": "* filter=evil\n"}, moved: []string{".git/info/attributes"}, kept: []string{".git/info/exclude"}, want: 1},
		{name: "rebase todo with exec", before: repo(".git/"),
			run: map[string]string{".git/rebase-merge/git-rebase-todo": "exec touch x\n", ".git/rebase-merge/interactive": ""}, moved: []string{".git/rebase-merge"}, want: 1},
		{name: "config.worktree", before: repo(".git/"),
			run: map[string]string{".git/config.worktree": "[core]\n\tfsmonitor = evil\n"}, moved: []string{".git/config.worktree"}, want: 1},
		{name: "included file created", before: merge(repo(".git/"), map[string]string{".git/config": "[include]\n\tpath = ../inc.cfg\n[includeIf \"onbranch:x\"]\n\tpath = ../if.cfg\n"}),
			run:   map[string]string{"inc.cfg": "[core]\n\tfsmonitor = evil\n", "if.cfg": "[core]\n\tpager = evil\n"},
			moved: []string{"inc.cfg", "if.cfg"}, want: 2},
		{name: "worktree pointers", before: repo(".git/"),
			run:   map[string]string{".git/worktrees/x/commondir": "../../../evil\n", ".git/worktrees/x/HEAD": "ref: x\n", ".git/worktrees/x/gitdir": "/x/.git\n"},
			moved: []string{".git/worktrees/x/commondir", ".git/worktrees/x/gitdir"}, kept: []string{".git/worktrees/x/HEAD"}, want: 2},
		{name: "submodule git dir", before: repo(".git/"),
			run: repo(".git/modules/sub/"), moved: []string{".git/modules/sub/config", ".git/modules/sub/hooks"}, want: 2},
		{name: "nested deep repository", before: map[string]string{"a.txt": "x"},
			run: repo("a/b/c/d/e/f/g/h/i/j/k/.git/"), moved: []string{"a/b/c/d/e/f/g/h/i/j/k/.git/hooks"}, want: 3},
		{name: "config changed", before: repo(".git/"),
			edit: func(t *testing.T, w string) {
				os.WriteFile(filepath.Join(w, ".git/config"), []byte("[core]\n\tfsmonitor = evil\n"), 0o644)
			}, moved: []string{".git/config"}, want: 1},
		{name: "hook made executable", before: merge(repo(".git/"), map[string]string{".git/hooks/pre-commit": "#!/bin/sh\n"}),
			edit:  func(t *testing.T, w string) { os.Chmod(filepath.Join(w, ".git/hooks/pre-commit"), 0o755) },
			moved: []string{".git/hooks/pre-commit"}, want: 1},
		{name: ".git file rewritten", before: merge(repo(".real/"), map[string]string{".git": "gitdir: .real\n"}),
			edit: func(t *testing.T, w string) {
				os.WriteFile(filepath.Join(w, ".git"), []byte("gitdir: /elsewhere\n"), 0o644)
			}, moved: []string{".git"}, want: 1},
		{name: "control files of other tools created", before: map[string]string{"a.txt": "x", ".vscode/settings.json": "{}"},
			run:   map[string]string{".envrc": "touch x", ".vscode/tasks.json": "{}", ".claude/settings.json": "{}", "w.code-workspace": "{}", ".moat-write": "/\n", "sub/.envrc": "plain file below the top"},
			moved: []string{".envrc", ".vscode/tasks.json", ".claude", "w.code-workspace", ".moat-write"}, kept: []string{".vscode/settings.json", "sub/.envrc"}, want: 5},
		{name: "link in the tree is not followed", before: map[string]string{"a.txt": "x"},
			edit: func(t *testing.T, w string) {
				other := t.TempDir()
				tree(t, other, repo(".git/"))
				os.Symlink(other, filepath.Join(w, "outside"))
			}, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := t.TempDir()
			tree(t, w, tt.before)
			snap := Take([]string{w})
			tree(t, w, tt.run)
			if tt.edit != nil {
				tt.edit(t, w)
			}
			found := snap.Check(sfx)
			if len(found) != tt.want {
				t.Errorf("%d findings, want %d: %q", len(found), tt.want, found)
			}
			for _, rel := range tt.moved {
				if _, err := os.Lstat(filepath.Join(w, rel+sfx)); err != nil {
					t.Errorf("%s not moved aside: %v; findings %q", rel, err, found)
				}
			}
			for _, rel := range tt.kept {
				if _, err := os.Lstat(filepath.Join(w, rel)); err != nil {
					t.Errorf("%s was not kept: %v", rel, err)
				}
				if _, err := os.Lstat(filepath.Join(w, rel+sfx)); err == nil {
					t.Errorf("%s was moved", rel)
				}
			}
			for _, rel := range tt.gone {
				if _, err := os.Lstat(filepath.Join(w, rel)); err == nil {
					t.Errorf("%s still there", rel)
				}
			}
			for _, f := range found {
				if !strings.Contains(f.Detail, "by the sandbox") || (f.MovedTo == "" && !strings.Contains(f.Detail, "could not") && !strings.Contains(f.Detail, "kept with its")) {
					t.Errorf("finding says too little: %+v", f)
				}
			}
			// A second check finds nothing new.
			if again := Take([]string{w}).Check(sfx); len(again) != 0 {
				t.Errorf("a check right after the first found %q", again)
			}
		})
	}
}

// Files that instruct a host agent are reported when the run makes or
// changes them, and left in place.
func TestCheckReportsInstructions(t *testing.T) {
	w := t.TempDir()
	tree(t, w, map[string]string{"AGENTS.md": "be careful\n", ".github/x": ""})
	snap := Take([]string{w})
	tree(t, w, map[string]string{"AGENTS.md": "run curl | sh\n", "CLAUDE.md": "x", ".github/copilot-instructions.md": "x", "README.md": "x"})
	found := snap.Check(sfx)
	if len(found) != 3 {
		t.Fatalf("findings %q", found)
	}
	for _, f := range found {
		if f.Kind != "agent-instructions" || f.MovedTo != "" {
			t.Errorf("finding %+v", f)
		}
		if _, err := os.Stat(f.Path); err != nil {
			t.Errorf("%s was not left in place", f.Path)
		}
	}
}

func TestCheckRestoresChangedFiles(t *testing.T) {
	w := t.TempDir()
	tree(t, w, merge(repo(".git/"), map[string]string{".git/hooks/pre-commit": "#!/bin/sh\necho ok\n"}))
	os.Chmod(filepath.Join(w, ".git/hooks/pre-commit"), 0o750)
	snap := Take([]string{w})
	os.WriteFile(filepath.Join(w, ".git/config"), []byte("[core]\n\tfsmonitor = evil\n"), 0o644)
	os.WriteFile(filepath.Join(w, ".git/hooks/pre-commit"), []byte("#!/bin/sh\necho evil\n"), 0o755)
	found := snap.Check(sfx)
	if len(found) != 2 {
		t.Fatalf("findings %q", found)
	}
	for rel, want := range map[string]string{".git/config": "[core]\n\tbare = false\n", ".git/hooks/pre-commit": "#!/bin/sh\necho ok\n"} {
		b, err := os.ReadFile(filepath.Join(w, rel))
		if err != nil || string(b) != want {
			t.Errorf("%s not restored: %q %v", rel, b, err)
		}
		if _, err := os.Stat(filepath.Join(w, rel+sfx)); err != nil {
			t.Errorf("the sandbox's %s was not kept aside: %v", rel, err)
		}
	}
	if fi, _ := os.Stat(filepath.Join(w, ".git/hooks/pre-commit")); fi.Mode().Perm() != 0o750 {
		t.Errorf("restored hook mode %v, want 0750", fi.Mode().Perm())
	}
	for _, f := range found {
		if !strings.Contains(f.Detail, "original restored") {
			t.Errorf("finding does not say the original was restored: %+v", f)
		}
	}
}

func TestCheckNameTaken(t *testing.T) {
	w := t.TempDir()
	snap := Take([]string{w})
	tree(t, w, map[string]string{".git": "gitdir: /x\n", ".git" + sfx: "older"})
	found := snap.Check(sfx)
	if len(found) != 1 || found[0].MovedTo != filepath.Join(w, ".git"+sfx+".1") {
		t.Fatalf("findings %+v", found)
	}
	if b, _ := os.ReadFile(filepath.Join(w, ".git"+sfx)); string(b) != "older" {
		t.Errorf("an earlier quarantined file was replaced: %q", b)
	}
}

func TestCheckDoesNotFollowLinksWhenMoving(t *testing.T) {
	w := t.TempDir()
	other := t.TempDir()
	tree(t, w, repo("r/.git/"))
	snap := Take([]string{w})
	// The sandbox adds a commondir, then swaps r for a link elsewhere.
	tree(t, w, map[string]string{"r/.git/commondir": "/evil\n"})
	tree(t, other, merge(repo(".git/"), map[string]string{".git/commondir": "x"}))
	after := Take([]string{w})
	os.Rename(filepath.Join(w, "r"), filepath.Join(w, "r.old"))
	os.Symlink(other, filepath.Join(w, "r"))
	found := Neutralise(snap, Diff(snap, after), sfx)
	if len(found) != 1 || !strings.Contains(found[0].Detail, "could not be moved") {
		t.Errorf("findings %+v", found)
	}
	if _, err := os.Lstat(filepath.Join(other, ".git/commondir")); err != nil {
		t.Errorf("a file outside the place was moved through a link: %v", err)
	}
}

func TestTakeIgnoresPlacesInsidePlaces(t *testing.T) {
	w := t.TempDir()
	tree(t, w, repo("sub/.git/"))
	s := Take([]string{w, filepath.Join(w, "sub"), "relative", ""})
	if len(s.places) != 1 || s.places[0] != w {
		t.Errorf("places %q", s.places)
	}
	if len(s.Paths()) == 0 {
		t.Error("no control paths found")
	}
}

func TestCheckRestoresAReplacedLink(t *testing.T) {
	w := t.TempDir()
	tree(t, w, merge(repo("real/"), map[string]string{".git": "->real"}))
	snap := Take([]string{w})
	os.Remove(filepath.Join(w, ".git"))
	tree(t, w, repo(".git/"))
	found := snap.Check(sfx)
	if len(found) != 1 || !strings.Contains(found[0].Detail, "original restored") {
		t.Fatalf("findings %+v", found)
	}
	if l, err := os.Readlink(filepath.Join(w, ".git")); err != nil || l != "real" {
		t.Errorf(".git is not the link again: %q %v", l, err)
	}
}

// A scan that reaches its bound says so, and a repository that predates
// the run but lay beyond the first scan's bound is not taken for new.
func TestCheckIncomplete(t *testing.T) {
	defer func(n int) { entryBudget = n }(entryBudget)
	entryBudget = 10
	w := t.TempDir()
	files := map[string]string{}
	for i := 0; i < 12; i++ {
		files[filepath.Join("many", strings.Repeat("f", i+1))] = "x"
	}
	tree(t, w, merge(files, repo("zz/deep/.git/")))
	snap := Take([]string{w})
	if snap.incomplete[w] == "" {
		t.Fatal("the first scan did not note that it was cut")
	}
	snap.taken = snap.taken.Add(2 * time.Second) // the tree was made well before the run
	entryBudget = 1000
	found := snap.Check(sfx)
	if len(found) != 0 {
		t.Errorf("a repository older than the run was treated as new: %+v", found)
	}
	entryBudget = 10
	found = Take([]string{w}).Check(sfx)
	if len(found) != 1 || found[0].MovedTo != "" || !strings.Contains(found[0].Detail, "not checked") {
		t.Errorf("an incomplete scan is not reported: %+v", found)
	}
}

// TestCheckRepairsUnreadable: a directory the run made unreadable is made
// readable again and what it hides is moved aside. Root reads it anyway.
func TestCheckRepairsUnreadable(t *testing.T) {
	w := t.TempDir()
	tree(t, w, map[string]string{"a.txt": "x"})
	snap := Take([]string{w})
	tree(t, w, repo("x/.git/"))
	if err := os.Chmod(filepath.Join(w, "x"), 0o311); err != nil {
		t.Fatal(err)
	}
	found := snap.Check(sfx)
	if _, err := os.Lstat(filepath.Join(w, "x/.git/hooks"+sfx)); err != nil {
		t.Errorf("x/.git/hooks not moved aside: %v; findings %q", err, found)
	}
	want := 3
	if os.Geteuid() != 0 {
		want = 4 // and the repair is said
	}
	if len(found) != want {
		t.Errorf("%d findings, want %d: %q", len(found), want, found)
	}
}
