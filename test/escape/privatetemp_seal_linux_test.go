//go:build linux

package escape_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

// With a mount namespace, a bind whose host path lies below a directory of
// /tmp (a grant of /tmp/d/sub/data, the private home under the state
// directory) has its mount point inside the sandbox's private, writable
// /tmp. The directories made there only to hold it are read-only mounts:
// the sandbox can neither rename them away nor put its own in their
// place, so the path keeps leading to the host's files. Control: a
// directory the sandbox made itself in its /tmp renames freely.
func TestPrivateTempParentsOfBindsSealed(t *testing.T) {
	top, err := os.MkdirTemp("/tmp", "escape-seal-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(top) })
	data := filepath.Join(top, "sub", "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(top, 0o755)
	if err := os.WriteFile(filepath.Join(data, "f"), []byte("host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := moat.Config{Isolation: moat.IsolationDefault, Grants: []moat.Grant{{Path: data, Access: moat.READ}}}
	if rep := newSandbox(t, cfg).Report(); !rep.Active("namespaces") {
		t.Skipf("namespaces inactive on this host: the grant is the host's own path, nothing is made in a private /tmp:\n%s", rep)
	}
	// Each attack prints what the path leads to afterwards.
	attacks := []struct{ name, script, want string }{
		{"rename the grant's top parent and replace it", `mv "$T" "$T.away"; mkdir -p "$T/sub/data" && echo fake > "$T/sub/data/f"; cat "$T/sub/data/f"`, "host"},
		{"rename the middle parent and replace it", `mv "$T/sub" "$T/sub.away"; mkdir -p "$T/sub/data" && echo fake > "$T/sub/data/f"; cat "$T/sub/data/f"`, "host"},
		{"rename the top parent away and link its name elsewhere", `mkdir -p /tmp/mine/sub/data && echo fake > /tmp/mine/sub/data/f; mv "$T" "$T.away" && ln -s /tmp/mine "$T"; cat "$T/sub/data/f"`, "host"},
		{"rename the private home's parent and replace it", `echo host > "$HOME/marker"; mv "$(dirname "$HOME")" /tmp/home.away && mkdir -p "$HOME" && echo fake > "$HOME/marker"; cat "$HOME/marker"`, "host"},
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			r := sh(t, newSandbox(t, cfg), "T="+top+"\n"+a.script) // a sandbox each: its /tmp persists between commands
			if strings.Contains(r.Stdout, "fake") || !strings.Contains(r.Stdout, a.want) {
				t.Errorf("the path now leads to the sandbox's files: %s", r)
			}
		})
	}
	// Control: the same moves work on directories the sandbox made.
	r := sh(t, newSandbox(t, cfg), `mkdir -p /tmp/own/sub/data && mv /tmp/own /tmp/own.away && mkdir -p /tmp/own/sub && ln -s /tmp/own.away/sub/data /tmp/own/sub/data && echo moved`)
	mustContain(t, r, "moved")
}
