//go:build linux

package escape_test

// Helpers for the isolation-level, protection, control-path, GPU and
// redirection probes.
//
// Tests that plant decoys in the invoking user's real home do NOT call
// t.Parallel at the top level: several of them plant fixed names (~/.netrc,
// ~/.ssh, ~/.aws/credentials) that TestFSHomeCredentials plants too, and
// top-level tests that are not parallel all finish before any parallel one
// starts, so they never race over the same home paths. Their subtests may
// run in parallel with each other.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

// shq quotes s for /bin/sh, for paths with spaces such as
// "Library/Application Support".
func shq(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// resolvedPath returns p as a moat.ResolvedPath or fails the test.
func resolvedPath(t *testing.T, p string) moat.ResolvedPath {
	t.Helper()
	r, err := moat.NewResolvedPath(p)
	if err != nil {
		t.Fatalf("NewResolvedPath(%s): %v", p, err)
	}
	return r
}

// levelConfig returns a Config at level with the level's preset protections
// changed by edit (nil: the preset, Security left nil).
func levelConfig(level moat.Isolation, edit func(*moat.SecurityConfig)) moat.Config {
	cfg := moat.Config{Isolation: level}
	if edit != nil {
		sec := level.Security()
		edit(&sec)
		cfg.Security = &sec
	}
	return cfg
}

// homeOpen turns ProtectUserHome off, leaving every other protection on.
func homeOpen(s *moat.SecurityConfig) { s.ProtectUserHome = false }

// allProtections is a SecurityConfig with every protection on.
func allProtections() moat.SecurityConfig {
	return moat.SecurityConfig{
		ProtectUserHome:    true,
		ProtectCredentials: true,
		ProtectCloudConfig: true,
		ProtectBrowserData: true,
		ProtectKeychains:   true,
		// Split out of ProtectCredentials (issue 16).
		ProtectShellHistory:       true,
		ProtectPackageCredentials: true,
	}
}

// readGrant returns cfg with a READ grant of p added.
func readGrant(t *testing.T, cfg moat.Config, p string) moat.Config {
	t.Helper()
	cfg.Readable(resolvedPath(t, p))
	return cfg
}

// plantHomeDir creates the directory rel under the real home (it must not
// exist) and removes the topmost directory it created when the test ends.
func plantHomeDir(t *testing.T, rel string) string {
	t.Helper()
	h := home(t)
	path := filepath.Join(h, rel)
	if _, err := os.Lstat(path); err == nil {
		t.Fatalf("%s already exists; refusing to take over a real directory", path)
	}
	created := path
	for d := filepath.Dir(path); d != h && d != "/" && d != "."; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		created = d
	}
	if err := os.MkdirAll(path, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(created) })
	return path
}

// plantExec writes an executable script at rel under the real home that
// prints marker.
func plantExec(t *testing.T, rel, marker string) string {
	t.Helper()
	p := plantHome(t, rel, "#!/bin/sh\necho "+marker+"\n")
	if err := os.Chmod(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// snapshot describes what is at path, for before/after comparisons: a
// file's content, a directory's sorted entries, a link's target.
func snapshot(path string) string {
	fi, err := os.Lstat(path)
	if err != nil {
		return "<absent>"
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		l, _ := os.Readlink(path)
		return "<link " + l + ">"
	case fi.IsDir():
		entries, _ := os.ReadDir(path)
		names := make([]string, len(entries))
		for i, e := range entries {
			names[i] = e.Name()
		}
		return "<dir " + strings.Join(names, ",") + ">"
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "<unreadable " + err.Error() + ">"
	}
	return string(b)
}

// hostGit runs git on the host in dir, with a fixed identity and no user
// or system configuration, and fails the test on error.
func hostGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	c := exec.Command("git", append([]string{"-C", dir}, args...)...)
	c.Env = append(os.Environ(),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Host", "GIT_AUTHOR_EMAIL=host@example.invalid",
		"GIT_COMMITTER_NAME=Host", "GIT_COMMITTER_EMAIL=host@example.invalid")
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil {
		t.Fatalf("host git %v in %s: %v\n%s%s", args, dir, err, out.String(), errb.String())
	}
	return out.String()
}

// newHostRepo makes dir a git repository on the host with one commit and a
// repository-local identity, so the sandbox can commit without a global
// configuration.
func newHostRepo(t *testing.T, dir string) {
	t.Helper()
	need(t, "git")
	hostGit(t, dir, "init", "-q", "-b", "main")
	hostGit(t, dir, "config", "user.name", "Moat Repo")
	hostGit(t, dir, "config", "user.email", "repo@example.invalid")
	writeFile(t, filepath.Join(dir, "base.txt"), "base\n")
	hostGit(t, dir, "add", "base.txt")
	hostGit(t, dir, "commit", "-q", "-m", "base")
}

// commitCount is the number of commits on HEAD of the repository at dir.
func commitCount(t *testing.T, dir string) string {
	t.Helper()
	return strings.TrimSpace(hostGit(t, dir, "rev-list", "--count", "HEAD"))
}
