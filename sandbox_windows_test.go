//go:build windows

package moat_test

// Integration tests of package moat on a real Windows host: what New
// refuses and what a best-effort sandbox runs. The backend's own tests
// are in internal/backend/windows.

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

// Strict enforcement refuses a sandbox whose write-xor-execute Windows
// cannot hold, naming it; best effort runs it and reports it.
func TestWindowsStrictNamesWriteXorExecute(t *testing.T) {
	_, err := moat.New(moat.Config{})
	var ue *moat.UnsupportedError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "write-xor-execute") {
		t.Fatalf("%v, want an UnsupportedError naming write-xor-execute", err)
	}
	sb, err := moat.New(moat.Config{Enforcement: moat.BestEffort})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	cmd := filepath.Join(os.Getenv("SystemRoot"), "System32", "cmd.exe")
	out, err := sb.Command(cmd, "/d", "/c", "echo hello").Output()
	if err != nil || strings.TrimSpace(string(out)) != "hello" {
		t.Fatalf("%q, %v", out, err)
	}
	r := sb.Report()
	if r.Platform != "windows" {
		t.Errorf("platform %q", r.Platform)
	}
	n := 0
	for _, l := range r.Layers {
		if l.Name == "write-xor-execute" {
			n++
			if l.Active {
				t.Errorf("write-xor-execute reported active: %s", l.Detail)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d write-xor-execute layers", n)
	}
}

// Permissive isolation is an UnsupportedSettingError whatever the
// enforcement.
func TestWindowsPermissiveIsUnsupportedSetting(t *testing.T) {
	for _, enf := range []moat.Enforcement{moat.Strict, moat.BestEffort} {
		_, err := moat.New(moat.Config{Isolation: moat.IsolationPermissive, Enforcement: enf})
		var se *moat.UnsupportedSettingError
		if !errors.As(err, &se) || !errors.Is(err, moat.ErrUnsupported) ||
			!strings.HasPrefix(err.Error(), "isolation permissive: not available on windows") {
			t.Errorf("enforcement %v: %v", enf, err)
		}
	}
}
