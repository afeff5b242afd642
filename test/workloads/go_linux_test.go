//go:build linux

package workloads_test

import (
	"strings"
	"testing"
)

// goProject is a module with a vet finding (a Sprintf verb of the wrong
// type) that the sandbox fixes itself, and a test.
var goProject = map[string]string{
	"go.mod": "module example.com/wl\n\ngo 1.21\n",
	"wl.go": `package wl

import "fmt"

// Label names n.
func Label(n string) string { return fmt.Sprintf("item %d", n) }
`,
	"wl_test.go": `package wl

import "testing"

func TestLabel(t *testing.T) {
	if got := Label("x"); got != "item x" {
		t.Fatalf("Label = %q", got)
	}
}
`,
	"cmd/wl/main.go": `package main

import (
	"fmt"

	"example.com/wl"
)

func main() { fmt.Println(wl.Label("main")) }
`,
}

// Go in a supplied working directory that is the user's repository: vet
// finds the bug, the sandbox fixes it, vet, build and test pass (test only
// in build mode: its binary is linked into GOTMPDIR and run), and the
// repository shows only what the commands wrote: no caches, no temp files.
func TestGo(t *testing.T) {
	need(t, "go", "git")
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, goProject)
			gitRepo(t, dir)
			sb := newSandbox(t, config(dir, m.build))

			r := run(t, sb, "", "go", "vet", "./...")
			if r.ok() || !strings.Contains(r.Out, "wrong type") {
				t.Fatalf("go vet should report the Sprintf verb: %s", r)
			}
			mustPass(t, "fixing the finding", sh(t, sb, `sed -i 's/item %d/item %s/' wl.go`))
			mustPass(t, "go vet", run(t, sb, "", "go", "vet", "./..."))
			mustPass(t, "go build", run(t, sb, "", "go", "build", "./..."))
			mustPass(t, "go build -o", run(t, sb, "", "go", "build", "-o", "wl-bin", "./cmd/wl"))

			r = run(t, sb, "", "go", "test", "./...")
			if m.build {
				mustPass(t, "go test in build mode", r)
				if !strings.Contains(r.Out, "ok  \texample.com/wl") {
					t.Fatalf("go test did not run the test: %s", r)
				}
				r = run(t, sb, "", "./wl-bin")
				if !r.ok() || strings.TrimSpace(r.Out) != "item main" {
					t.Fatalf("the built binary did not run in build mode: %s", r)
				}
			} else {
				// The documented message: the test binary cannot be run.
				wxRefused(t, "go test", r)
				if !strings.Contains(r.Out, "fork/exec") || !strings.Contains(r.Out, ".test") {
					t.Fatalf("go test failed, but not on executing its test binary: %s", r)
				}
				r = run(t, sb, "", "./wl-bin")
				if r.Code != -1 || !hasExecRefusal(sb) {
					t.Fatalf("./wl-bin should be refused before it starts, with an exec refusal naming --build: %s\nrefusals: %v", r, sb.Refusals())
				}
			}
			if got, want := porcelain(t, dir), " M wl.go\n?? wl-bin\n"; got != want {
				t.Fatalf("git status --porcelain after the run:\n%s\nwant only what the commands wrote:\n%s", got, want)
			}
		})
	}
}
