package runjournal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/gitguard"
)

// TestJournalSweepsNewGitControls: the sweep of a dead run sets aside the
// control paths its sandbox created inside a git directory that existed
// at its start (commondir, config.worktree, info/attributes) and those of
// a place the sandbox turned into a bare-layout git directory, and leaves
// the user's own (config, hooks/pre-commit). Control: a live owner's
// journal is left alone, and the planted paths stay.
func TestJournalSweepsNewGitControls(t *testing.T) {
	for _, dead := range []bool{true, false} {
		t.Run(map[bool]string{true: "dead owner", false: "control: live owner"}[dead], func(t *testing.T) {
			root := withStateRoot(t)
			repo, bare, fresh := t.TempDir(), t.TempDir(), t.TempDir()
			write := func(p, s string) {
				t.Helper()
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			g := filepath.Join(repo, ".git")
			write(filepath.Join(g, "HEAD"), "ref: refs/heads/main\n")
			write(filepath.Join(g, "objects/.keep"), "")
			write(filepath.Join(g, "refs/heads/.keep"), "")
			write(filepath.Join(g, "config"), "[core]\n\tbare = false\n")
			write(filepath.Join(g, "hooks/pre-commit"), "#!/bin/sh\n")
			write(filepath.Join(bare, "README"), "user's\n")
			dir, err := stateSub(root, "journal")
			if err != nil {
				t.Fatal(err)
			}
			o := selfOwner()
			if dead {
				o.Start++
			}
			j := &runJournal{Version: journalVersion, ID: "0123456789ac", Owner: o}
			for _, pl := range []string{repo, bare, fresh} {
				jp := journalPlace{Path: pl, Present: topControlEntries(pl), Recorded: true}
				for _, p := range gitguard.Take([]string{pl}).Paths() {
					r, _ := filepath.Rel(pl, p)
					jp.Controls = append(jp.Controls, r)
				}
				j.Places = append(j.Places, jp)
			}
			if _, err := writeJournal(dir, j); err != nil {
				t.Fatal(err)
			}
			planted := []string{
				filepath.Join(g, "commondir"), filepath.Join(g, "config.worktree"), filepath.Join(g, "info/attributes"),
				filepath.Join(bare, "config"), filepath.Join(bare, "hooks/post-checkout"),
			}
			write(planted[0], "../.cache/x\n")
			write(planted[1], "[core]\n\tfsmonitor = echo PWN\n")
			write(planted[2], "* filter=pwn\n")
			write(filepath.Join(bare, "HEAD"), "ref: refs/heads/main\n")
			write(filepath.Join(bare, "objects/.keep"), "")
			write(filepath.Join(bare, "refs/heads/.keep"), "")
			write(planted[3], "[core]\n\tbare = false\n\tworktree = .\n\tfsmonitor = echo PWN\n")
			write(planted[4], "#!/bin/sh\necho PWN\n")
			// A repository the dead run made at the top of fresh: kept
			// with an inert config, which the sweep must not move again.
			fg := filepath.Join(fresh, ".git")
			write(filepath.Join(fg, "HEAD"), "ref: refs/heads/main\n")
			write(filepath.Join(fg, "objects/.keep"), "")
			write(filepath.Join(fg, "refs/heads/.keep"), "")
			write(filepath.Join(fg, "config"), "[core]\n\tbare = false\n\tfsmonitor = echo PWN\n")
			sb, found, err := openRun(Config{ID: newID()})
			if err != nil {
				t.Fatal(err)
			}
			defer sb.Close()
			for _, p := range planted {
				_, err := os.Lstat(p)
				if dead && err == nil {
					t.Errorf("%s created by the dead run is still there: %v", p, *found)
				}
				if !dead && err != nil {
					t.Errorf("control: %s of a live run was swept", p)
				}
			}
			if b, err := os.ReadFile(filepath.Join(fg, "config")); dead && (err != nil || strings.Contains(string(b), "PWN")) {
				t.Errorf("the new repository kept by the sweep has no inert config: %q %v\n%v", b, err, *found)
			}
			for _, p := range []string{filepath.Join(g, "config"), filepath.Join(g, "hooks/pre-commit"), filepath.Join(bare, "README")} {
				if _, err := os.Lstat(p); err != nil {
					t.Errorf("the user's %s was touched: %v", p, err)
				}
			}
		})
	}
}
