package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTokenFile(t *testing.T) {
	// A runtime directory is never used, even when there is one: a policy
	// may grant it readable.
	rt := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", rt)
	root := t.TempDir()
	dir, err := TokenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if dir != filepath.Join(root, "mcp") {
		t.Errorf("dir %q, want the state root's mcp directory", dir)
	}
	if _, err := os.Lstat(filepath.Join(rt, "moat")); err == nil {
		t.Error("TokenDir made a directory in the runtime directory")
	}
	fi, _ := os.Stat(dir)
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v", fi.Mode())
	}
	path, err := WriteToken(dir, 1234, "tok")
	if err != nil {
		t.Fatal(err)
	}
	fi, _ = os.Stat(path)
	b, _ := os.ReadFile(path)
	if fi.Mode().Perm() != 0o600 || strings.TrimSpace(string(b)) != "tok" {
		t.Errorf("token file %v %q", fi.Mode(), b)
	}
	// A dead server's token file is swept, a live one's kept.
	dead := filepath.Join(dir, "mcp-1-999999999.token")
	if err := os.WriteFile(dead, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	SweepTokens(dir)
	if _, err := os.Stat(dead); err == nil {
		t.Error("a dead server's token file was kept")
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the live server's token file was swept: %v", err)
	}
	// Never over an existing file or through a link.
	if _, err := WriteToken(dir, 1234, "tok"); err == nil {
		t.Error("a second token file replaced the first")
	}
	// A directory others may enter is refused; a link to one too.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := TokenDir(root); err == nil {
		t.Error("a 0755 token directory was accepted")
	}
	root2 := t.TempDir()
	other := t.TempDir()
	if err := os.Symlink(other, filepath.Join(root2, "mcp")); err != nil {
		t.Fatal(err)
	}
	if _, err := TokenDir(root2); err == nil {
		t.Error("a link as the token directory was accepted")
	}
	// No state root given: moat's state directory, not the runtime one.
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	if dir, err := TokenDir(""); err != nil || !strings.HasPrefix(dir, os.Getenv("XDG_STATE_HOME")+"/") || strings.HasPrefix(dir, rt) {
		t.Errorf("TokenDir(\"\") = %q, %v; want under $XDG_STATE_HOME", dir, err)
	}
}
