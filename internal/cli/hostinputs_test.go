package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/moat-sandbox/moat/internal/hostinput"
)

// pinConfig gives the test a state directory of its own and pins path's
// content there, as moat trust does: a config that the run's sandbox could
// write (any file of the user's, at isolation permissive) is read only
// when pinned.
func pinConfig(t *testing.T, path string) {
	t.Helper()
	state := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_STATE_HOME", state)
	store, err := hostStore()
	if err != nil {
		t.Fatal(err)
	}
	pin, err := hostinput.PinOf(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Trust(pin); err != nil {
		t.Fatal(err)
	}
}

// TestPermissiveConfig: at isolation permissive a config of the user's is
// refused, since the run's sandbox could rewrite it, unless pinned or
// under a protected path.
func TestPermissiveConfig(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	os.Mkdir(state, 0o700)
	t.Setenv("XDG_STATE_HOME", state)
	file := writeConfig(t, t.TempDir(), "isolation = \"permissive\"\n")
	if _, err := parseSandboxFlags(t, []string{"--config", file}); err == nil {
		t.Fatal("a permissive config the sandbox could rewrite was read")
	}
	pinConfig(t, file)
	if _, err := parseSandboxFlags(t, []string{"--config", file}); err != nil {
		t.Fatalf("pinned, still refused: %v", err)
	}
}
