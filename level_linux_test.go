package moat_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

// Shared temp is busy: entries the default level lists when the sandbox is
// configured may be gone when it is built. That must not fail the sandbox,
// and what remains must still be readable.
func TestDefaultLevelSurvivesVanishingSharedTemp(t *testing.T) {
	gone, err := os.MkdirTemp("/tmp", "vanishing-")
	if err != nil {
		t.Fatal(err)
	}
	goneFile := gone + "-file"
	os.WriteFile(goneFile, []byte("x"), 0o644)
	kept, err := os.MkdirTemp("/tmp", "kept-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(kept)
	os.WriteFile(filepath.Join(kept, "f"), []byte("KEPT-ENTRY"), 0o644)

	sb := newSandbox(t, moat.Config{Isolation: moat.IsolationDefault})
	os.RemoveAll(gone)
	os.Remove(goneFile)
	out, err := sb.Command("cat", filepath.Join(kept, "f")).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "KEPT-ENTRY") {
		t.Fatalf("after shared temp entries vanished: %v: %s", err, out)
	}
}
