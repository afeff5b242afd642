//go:build linux

package escape_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestQuarantineHostileEntry: a sandbox leaves control directories that
// Close sets aside themselves 0500 (.git, .agents), and in them directories its owner cannot write (0500), read
// (0000) or search into (0100), a FIFO, and 1500 files of 16 KiB of NUL
// bytes (escaped, six bytes each: 140 MiB). moat quarantine show prints
// at most 1 MiB and says what it left out; moat quarantine prune --all
// removes the entry whole. The controls: the escaped files are that
// large, and a plain recursive removal of the entry (os.RemoveAll, what
// prune did before) fails on it, leaving it listed.
func TestQuarantineHostileEntry(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Fatal("run as an unprivileged user: root ignores directory modes, so neither the attack nor its control shows anything")
	}
	root := t.TempDir()
	work := filepath.Join(root, "w")
	if err := os.Mkdir(work, 0o700); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(root, "state")
	env := []string{"XDG_STATE_HOME=" + state}
	r := moatCLI(t, work, env, "run", "--workdir", ".", "--", "sh", "-c", `set -e
		mkdir -p .git/ro .git/none/sub .git/x/y .git/big
		echo y > .git/ro/g; echo z > .git/none/sub/h; echo w > .git/x/y/i
		mkfifo .git/ro/fifo
		head -c 16384 /dev/zero > .git/big/f
		i=0; while [ $i -lt 1500 ]; do cp .git/big/f .git/big/f$i; i=$((i+1)); done
		chmod 500 .git/ro; chmod 000 .git/none; chmod 100 .git/x
		mkdir -p .agents/a; echo v > .agents/a/j; chmod 500 .agents/a .agents .git`)
	if r.Code != 0 || !strings.Contains(r.Stderr, ".git: created by the sandbox; moved to") || strings.Contains(r.Stderr, "could not be moved") {
		t.Fatalf("the run: %s", r)
	}
	// Close moved even the directories left 0500 into the quarantine
	// (moving a directory to another parent needs it writable: the
	// control below shows the plain rename fails).
	if ents, _ := os.ReadDir(work); len(ents) != 0 {
		t.Fatalf("Close left %v in the working directory", ents)
	}
	ro := filepath.Join(root, "ro")
	if err := os.Mkdir(ro, 0o500); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(ro, filepath.Join(work, "ro")); err == nil {
		t.Fatal("control: a 0500 directory moved to another parent, so the case shows nothing")
	}
	r = moatCLI(t, root, env, "quarantine", "list")
	id := regexp.MustCompile(`(?m)^([0-9a-f]{12})  `).FindStringSubmatch(r.Stdout)
	if r.Code != 0 || id == nil {
		t.Fatalf("list:\n%s", r)
	}
	entry := filepath.Join(state, "moat", "quarantine", id[1])
	if _, err := os.Lstat(entry); err != nil {
		entry = filepath.Join(state, "quarantine", id[1])
	}

	// show: bounded, and says so. Control: what it would print unbounded.
	var raw int64
	filepath.WalkDir(entry, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				raw += fi.Size()
			}
		}
		return nil
	})
	if raw*6 < 100<<20 {
		t.Fatalf("control: the entry's files escape to only %d bytes", raw*6)
	}
	r = moatCLI(t, root, env, "quarantine", "show", id[1])
	if r.Code != 0 || len(r.Stdout) > 1<<20+4096 || !strings.Contains(r.Stdout, "more files not shown") {
		t.Fatalf("show printed %d bytes (at most 1 MiB wanted, and what was left out), exit %d; its tail:\n%s", len(r.Stdout), r.Code, r.Stdout[max(0, len(r.Stdout)-400):])
	}

	// Control: a plain recursive removal fails on the locked directories,
	// and the entry stays listed.
	if err := os.RemoveAll(entry); err == nil {
		t.Fatal("control: os.RemoveAll removed the entry, so the case shows nothing")
	} else {
		t.Logf("control: os.RemoveAll: %v", err)
	}
	if r = moatCLI(t, root, env, "quarantine", "list"); !strings.Contains(r.Stdout, id[1]) {
		t.Fatalf("control: the entry is not listed after the failed removal:\n%s", r)
	}

	r = moatCLI(t, root, env, "quarantine", "prune", "--all")
	if r.Code != 0 || !strings.Contains(r.Stdout, "removed "+id[1]) || strings.Contains(r.Stdout, "partly") {
		t.Fatalf("prune --all:\n%s", r)
	}
	if r = moatCLI(t, root, env, "quarantine", "list"); !strings.Contains(r.Stdout, "is empty") {
		t.Fatalf("list after prune --all:\n%s", r)
	}
	ents, _ := os.ReadDir(filepath.Dir(entry))
	var names []string
	for _, e := range ents {
		if e.Name() != ".pruned" { // when the automatic prune last ran
			names = append(names, e.Name())
		}
	}
	if len(names) != 0 {
		t.Fatalf("prune --all left %v in the quarantine", names)
	}
}
