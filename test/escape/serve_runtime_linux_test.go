//go:build linux

package escape_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

// TestServeRuntimeDirHidden: the directory where moat serve keeps its
// socket ($XDG_RUNTIME_DIR/moat) is hidden from every sandbox, even one
// granted the runtime directory read-write, so no sandbox can move the
// socket aside and listen in its place to take a client's token; a grant,
// working directory or home in it is refused. Control: a sibling directory
// of the same grant is read and written.
func TestServeRuntimeDirHidden(t *testing.T) {
	rt := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", rt)
	serveDir := filepath.Join(rt, "moat")
	other := filepath.Join(rt, "other")
	for _, d := range []string{serveDir, other} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "serve.sock"), []byte("SECRET-PLACE\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, level := range []moat.Isolation{moat.IsolationStrict, moat.IsolationDefault, moat.IsolationPermissive} {
		t.Run(level.String(), func(t *testing.T) {
			os.Remove(filepath.Join(other, "moved")) // the last level's control moved it
			if err := os.WriteFile(filepath.Join(other, "serve.sock"), []byte("SECRET-PLACE\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg := levelConfig(level, nil)
			cfg.Grants = []moat.Grant{{Path: rt, Access: moat.READ | moat.WRITE}}
			sb := newSandbox(t, cfg)
			probe := func(dir string) result {
				return sh(t, sb, `cat `+dir+`/serve.sock; mv `+dir+`/serve.sock `+dir+`/moved && echo MOVED; echo x > `+dir+`/planted && echo PLANTED`)
			}
			r := probe(serveDir)
			for _, bad := range []string{"SECRET-PLACE", "MOVED", "PLANTED"} {
				mustNotContain(t, r, bad)
			}
			if _, err := os.Lstat(filepath.Join(serveDir, "serve.sock")); err != nil {
				t.Errorf("the socket's place changed: %v", err)
			}
			c := probe(other) // control: the same grant reaches its sibling
			for _, want := range []string{"SECRET-PLACE", "MOVED", "PLANTED"} {
				mustContain(t, c, want)
			}
		})
	}
	for _, tt := range []struct {
		name string
		cfg  moat.Config
	}{
		{"grant of it", moat.Config{Grants: []moat.Grant{{Path: serveDir, Access: moat.READ}}}},
		{"grant in it", moat.Config{Grants: []moat.Grant{{Path: filepath.Join(serveDir, "serve.sock"), Access: moat.READ | moat.WRITE}}}},
		{"working directory in it", moat.Config{WorkDir: serveDir}},
	} {
		t.Run("refused: "+tt.name, func(t *testing.T) {
			sb, err := moat.New(tt.cfg)
			if err == nil {
				sb.Close()
			}
			var pe *moat.PlaceError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), "moat serve keeps its socket") {
				t.Fatalf("moat.New: %v, want a place error naming moat serve's socket directory", err)
			}
		})
	}
	t.Run("control: a grant of a sibling", func(t *testing.T) {
		sb, err := moat.New(moat.Config{Grants: []moat.Grant{{Path: other, Access: moat.READ}}})
		if err != nil {
			t.Fatal(err)
		}
		sb.Close()
	})
}
