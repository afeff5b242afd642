package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadServePolicies: the named policies of moat serve and moat mcp are
// read from files, named, and refused, as usage errors naming the spec,
// when they cannot be served as written.
func TestLoadServePolicies(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_STATE_HOME", state)
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	toml := write("strict.toml", "isolation = \"strict\"\n[limits]\nmax-memory = \"1G\"\n")
	doc := write("net.json", `{"command": ["true"], "network": "allow-list", "allowDomains": ["example.com"]}`)
	docCwd := write("cwd.json", `{"command": ["true"], "cwd": "/srv"}`)
	docEnv := write("env.json", `{"command": ["true"], "env": {"set": {"A": "1"}}}`)
	bad := write("bad.toml", "no-such-key = 1\n")
	for _, tc := range []struct {
		name  string
		specs []string
		names []string // the policies served, when no error
		err   string   // in the usage error
	}{
		{name: "none serves the default", specs: nil, names: []string{"default"}},
		{name: "named toml", specs: []string{"s=" + toml}, names: []string{"s"}},
		{name: "named after the file", specs: []string{toml, doc}, names: []string{"strict", "net"}},
		{name: "duplicate name", specs: []string{"a=" + toml, "a=" + doc}, err: "a second policy named"},
		{name: "bad name", specs: []string{"Bad Name=" + toml}, err: "is not lower-case"},
		{name: "standard input", specs: []string{"x=-"}, err: "never from standard input"},
		{name: "empty file", specs: []string{"x="}, err: "never from standard input"},
		{name: "missing file", specs: []string{"x=" + filepath.Join(dir, "missing.toml")}, err: "missing.toml"},
		{name: "unknown key", specs: []string{bad}, err: "no-such-key"},
		{name: "document with cwd", specs: []string{docCwd}, err: "cwd: a served policy cannot set it"},
		{name: "document with env", specs: []string{docEnv}, err: "env: a served policy cannot set it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := loadServePolicies(tc.specs)
			if tc.err != "" {
				var ue *usageError
				if err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("loadServePolicies(%q) = %v, want a usage error containing %q", tc.specs, err, tc.err)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Fatalf("error is not one line: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("loadServePolicies(%q): %v", tc.specs, err)
			}
			var names []string
			for _, p := range got {
				names = append(names, p.Name)
			}
			if strings.Join(names, ",") != strings.Join(tc.names, ",") {
				t.Fatalf("policies %q, want %q", names, tc.names)
			}
		})
	}
}
