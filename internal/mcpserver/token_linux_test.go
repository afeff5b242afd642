package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTokenFile(t *testing.T) {
	rt := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", rt)
	dir, err := TokenDir("")
	if err != nil {
		t.Fatal(err)
	}
	if dir != filepath.Join(rt, "moat") {
		t.Errorf("dir %q", dir)
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
	if _, err := TokenDir(""); err == nil {
		t.Error("a 0755 token directory was accepted")
	}
	rt2 := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", rt2)
	other := t.TempDir()
	if err := os.Symlink(other, filepath.Join(rt2, "moat")); err != nil {
		t.Fatal(err)
	}
	if _, err := TokenDir(""); err == nil {
		t.Error("a link as the token directory was accepted")
	}
	// No runtime directory: under the state root.
	t.Setenv("XDG_RUNTIME_DIR", "")
	root := t.TempDir()
	if dir, err := TokenDir(root); err != nil || dir != filepath.Join(root, "mcp") {
		t.Errorf("TokenDir(state root) = %q, %v", dir, err)
	}
}
