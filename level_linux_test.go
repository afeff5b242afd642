package moat_test

import (
	"os"
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
	// A regular file anyone may read: the default level shows no
	// directories of shared temp (see internal/hostview/sharedtemp.go).
	keptF, err := os.CreateTemp("/tmp", "kept-")
	if err != nil {
		t.Fatal(err)
	}
	kept := keptF.Name()
	keptF.WriteString("KEPT-ENTRY")
	keptF.Close()
	os.Chmod(kept, 0o644)
	defer os.Remove(kept)

	sb := newSandbox(t, moat.Config{Isolation: moat.IsolationDefault})
	os.RemoveAll(gone)
	os.Remove(goneFile)
	out, err := sb.Command("cat", kept).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "KEPT-ENTRY") {
		t.Fatalf("after shared temp entries vanished: %v: %s", err, out)
	}
}
