//go:build linux

package escape_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

// execGoPath puts the Go toolchain's directory first on this process's
// PATH, which moat filters into the sandbox's as it does for moat run.
func execGoPath(t *testing.T) {
	t.Helper()
	const goDir = "/usr/local/go/bin"
	if _, err := os.Stat(filepath.Join(goDir, "go")); err != nil {
		t.Fatalf("this test needs go in %s: %v", goDir, err)
	}
	t.Setenv("PATH", goDir+":"+os.Getenv("PATH"))
}

// TestExecBuildModeRunsWhatItBuilds: with "build": true a policy
// document's writable cwd stands in for moat run's working directory,
// so `go build -o app . && ./app` runs the binary it linked. The control
// is the same document without build mode: the build writes ./app, and
// write-xor-execute refuses to run it.
func TestExecBuildModeRunsWhatItBuilds(t *testing.T) {
	execGoPath(t)
	cache := docCwd(t) // one build cache for the cases, granted rw
	for _, tt := range []struct {
		name  string
		build bool
		fs    map[string]any
		dir   string // where app is built, relative to the cwd
	}{
		{"build mode, writable cwd", true, map[string]any{"writable": []string{"."}}, "."},
		{"build mode, writable target", true, map[string]any{"writable": []string{"out/"}}, "out"},
		{"control: no build mode", false, map[string]any{"writable": []string{"."}}, "."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cwd := docCwd(t)
			plant(t, filepath.Join(cwd, "go.mod"), "module app\n\ngo 1.21\n")
			plant(t, filepath.Join(cwd, "main.go"), "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"BUILT-AND-RAN\") }\n")
			if err := os.MkdirAll(filepath.Join(cwd, "out"), 0o755); err != nil {
				t.Fatal(err)
			}
			app := filepath.Join(tt.dir, "app")
			r := runDocument(t, map[string]any{
				"command":    []string{"sh", "-c", "go build -o " + app + " . && ./" + app},
				"build":      tt.build,
				"env":        map[string]any{"set": map[string]string{"CGO_ENABLED": "0", "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local", "GOCACHE": cache}},
				"grants":     map[string]string{cache: "rw"},
				"filesystem": tt.fs,
			}, cwd)
			if _, err := os.Stat(filepath.Join(cwd, app)); err != nil {
				t.Fatalf("go build did not write %s (%v):\n%v", app, err, r)
			}
			if ran := strings.Contains(r.Stdout, "BUILT-AND-RAN"); ran != tt.build {
				t.Errorf("ran the built binary: %v, want %v:\n%v", ran, tt.build, r)
			}
		})
	}
}

// TestExecPathAsRun: moat exec's PATH is moat run's, the host PATH
// filtered, whatever the environment mode: go in /usr/local/go/bin is
// found with the default empty allowlist, an allowlist and blocklist
// mode, and the PATH is the same one a moat.New sandbox (moat run's)
// gets. The control takes the Go directory off the host PATH, and go is
// not found.
func TestExecPathAsRun(t *testing.T) {
	execGoPath(t)
	probe := []string{"sh", "-c", `printf '%s\n' "$PATH"; command -v go || echo NO-GO`}
	sb := newSandbox(t, moat.Config{})
	c := sb.Command(probe[0], probe[1:]...)
	out, err := c.Output()
	if err != nil {
		t.Fatal(err)
	}
	runPath := strings.SplitN(string(out), "\n", 2)[0]
	for _, tt := range []struct {
		name string
		env  map[string]any
	}{
		{"default allowlist", nil},
		{"allowlist", map[string]any{"allow": []string{"LANG"}}},
		{"blocklist", map[string]any{"deny": []string{"LANG"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc := map[string]any{"command": probe}
			if tt.env != nil {
				doc["env"] = tt.env
			}
			r := runDocument(t, doc, docCwd(t))
			lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
			if len(lines) != 2 || lines[0] != runPath || lines[1] != "/usr/local/go/bin/go" {
				t.Errorf("want PATH %q (moat run's) and go from /usr/local/go/bin:\n%v", runPath, r)
			}
		})
	}
	t.Run("control: go off the host PATH", func(t *testing.T) {
		t.Setenv("PATH", "/usr/bin:/bin")
		r := runDocument(t, map[string]any{"command": probe}, docCwd(t))
		if !strings.Contains(r.Stdout, "NO-GO") {
			t.Errorf("control: go found off PATH:\n%v", r)
		}
	})
}
