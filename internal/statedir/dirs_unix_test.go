//go:build unix

package statedir

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// The private places derive from the state directory and the supplied
// home, and are none before the state directory exists.
func TestDirsPlaces(t *testing.T) {
	for _, tc := range []struct {
		name              string
		d                 Dirs
		tmp, home, cmdDir string
		roots             []string
	}{
		{"none yet", Dirs{Work: "/w"}, "", "", "/w/sub", []string{"/c"}},
		{"private home", Dirs{Work: "/w", State: "/s"}, "/s/tmp", "/s/home", "/w/sub", []string{"/s", "/c"}},
		{"supplied home", Dirs{Work: "/w", State: "/s", Home: "/h"}, "/s/tmp", "/h", "/w/sub", []string{"/s", "/h", "/c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.d.Tmp(); got != tc.tmp {
				t.Errorf("Tmp() = %q, want %q", got, tc.tmp)
			}
			if got := tc.d.PrivateHome(); got != tc.home {
				t.Errorf("PrivateHome() = %q, want %q", got, tc.home)
			}
			if got := tc.d.CommandDir("sub"); got != tc.cmdDir {
				t.Errorf("CommandDir(sub) = %q, want %q", got, tc.cmdDir)
			}
			if got := tc.d.CommandDir("/abs/../x"); got != "/x" {
				t.Errorf("CommandDir(/abs/../x) = %q", got)
			}
			if got := tc.d.PrivateRoots([]string{"/c"}); !reflect.DeepEqual(got, tc.roots) {
				t.Errorf("PrivateRoots = %q, want %q", got, tc.roots)
			}
		})
	}
}

// Remove takes an automatic working directory and the state directory,
// and leaves a supplied working directory.
func TestDirsRemove(t *testing.T) {
	for _, auto := range []bool{true, false} {
		base := t.TempDir()
		work, state := filepath.Join(base, "work"), filepath.Join(base, "state")
		for _, p := range []string{work, state} {
			if err := os.Mkdir(p, 0o700); err != nil {
				t.Fatal(err)
			}
		}
		d := Dirs{Work: work, Auto: auto, State: state}
		if err := d.Remove(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(work); (err == nil) == auto {
			t.Errorf("auto %v: working directory left %v", auto, err == nil)
		}
		if _, err := os.Stat(state); err == nil || d.State != "" {
			t.Errorf("auto %v: state directory left", auto)
		}
	}
}
