//go:build linux

package escape_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestQuarantineCLI: what a sandbox leaves in its working directory is set
// aside at Close, and moat quarantine reads it as the hostile data it is.
// The sandbox writes a terminal escape (OSC, which retitles a terminal or
// worse) into .envrc and makes FIFOs under control names: list and show
// print the escape as text, name the FIFOs without opening them (a
// blocking open would hang the test), and restore puts back only the path
// named, after printing it, refusing without --yes off a terminal and
// never over a file that exists. The positive control is the sandbox's
// own file: restored, its bytes (escape and all) are back as written.
func TestQuarantineCLI(t *testing.T) {
	root := t.TempDir()
	work := filepath.Join(root, "w")
	if err := os.Mkdir(work, 0o700); err != nil {
		t.Fatal(err)
	}
	env := []string{"XDG_STATE_HOME=" + filepath.Join(root, "state")}
	const envrc = "export X=1\x1b]0;pwned\x07\n"
	r := moatCLI(t, work, env, "run", "--workdir", ".", "--", "sh", "-c",
		`printf 'export X=1\033]0;pwned\007\n' > .envrc; mkfifo .moat-fifo .agents`)
	if r.Code != 0 || !strings.Contains(r.Stderr, ".envrc: created by the sandbox; moved to") {
		t.Fatalf("the run: %s", r)
	}
	if ents, _ := os.ReadDir(work); len(ents) != 0 {
		t.Fatalf("Close left %v in the working directory", ents)
	}

	run := func(args ...string) result {
		t.Helper()
		done := make(chan result, 1)
		go func() { done <- moatCLI(t, root, env, append([]string{"quarantine"}, args...)...) }()
		select {
		case r := <-done:
			return r
		case <-time.After(60 * time.Second):
			t.Fatalf("moat quarantine %v hangs (a FIFO opened?)", args)
			return result{}
		}
	}
	noEscape := func(what string, r result) {
		t.Helper()
		if strings.ContainsRune(r.Stdout+r.Stderr, 0x1b) || strings.ContainsRune(r.Stdout+r.Stderr, 0x07) {
			t.Errorf("%s let a control character through:\n%s", what, r)
		}
	}

	r = run("list")
	noEscape("list", r)
	id := regexp.MustCompile(`(?m)^([0-9a-f]{12})  `).FindStringSubmatch(r.Stdout)
	if r.Code != 0 || id == nil || !strings.Contains(r.Stdout, work+"/.envrc  (21 B)") || !strings.Contains(r.Stdout, work+"/.moat-fifo  (FIFO)") {
		t.Fatalf("list:\n%s", r)
	}

	r = run("show", id[1])
	noEscape("show", r)
	if r.Code != 0 || !strings.Contains(r.Stdout, `export X=1\u001b]0;pwned\u0007`) || !strings.Contains(r.Stdout, work+"/.agents (FIFO, not opened)") {
		t.Fatalf("show:\n%s", r)
	}

	// Restore: off a terminal, without --yes, it prints and restores nothing.
	target := filepath.Join(work, ".envrc")
	r = run("restore", id[1], target)
	noEscape("restore", r)
	if r.Code != 2 || !strings.Contains(r.Stdout, `pwned\u0007`) || !strings.Contains(r.Stderr, "--yes") {
		t.Fatalf("restore without --yes:\n%s", r)
	}
	if _, err := os.Lstat(target); err == nil {
		t.Fatal("restore without --yes restored")
	}
	// Never over a file of the host's.
	if err := os.WriteFile(target, []byte("mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = run("restore", "--yes", id[1], target)
	if r.Code != 2 || !strings.Contains(r.Stderr, "exists on the host") {
		t.Fatalf("restore over a file:\n%s", r)
	}
	if b, _ := os.ReadFile(target); string(b) != "mine\n" {
		t.Fatalf("the host's file became %q", b)
	}
	// Control: with the place free and --yes, the named path comes back,
	// byte for byte, and nothing else does.
	os.Remove(target)
	r = run("restore", "--yes", id[1], target)
	if r.Code != 0 || !strings.Contains(r.Stdout, "restored "+target) {
		t.Fatalf("restore --yes:\n%s", r)
	}
	if b, _ := os.ReadFile(target); string(b) != envrc {
		t.Errorf("restored %q, want %q", b, envrc)
	}
	if _, err := os.Lstat(filepath.Join(work, ".moat-fifo")); err == nil {
		t.Error("restore put back a path it was not given")
	}

	// Prune --all empties the quarantine.
	r = run("prune", "--all")
	if r.Code != 0 || !strings.Contains(r.Stdout, "removed "+id[1]) {
		t.Fatalf("prune --all:\n%s", r)
	}
	if r = run("list"); !strings.Contains(r.Stdout, "is empty") {
		t.Errorf("list after prune --all:\n%s", r)
	}
}
