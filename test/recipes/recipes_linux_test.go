//go:build linux

// Package recipes runs every command of the README's "## Recipes" section,
// the way a reader types it, against loopback stand-ins of the registries
// it names (substitute_test.go has the rules): each recipe in a fixture
// project of its own (fixtures_linux_test.go), "moat" being this test
// binary's moat command line. A recipe passes when each of its moat
// commands exits 0 and prints no refusal line.
//
// ./test.sh builds this package's test binary and runs it as the
// unprivileged test user, like the workloads. Run as root, the package
// refuses to start unless MOAT_RECIPES_AS_ROOT=1. MOAT_RECIPES_README names
// another README to read; by default it is the repository's README.md.
package recipes_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat/internal/cli"
	"github.com/moat-sandbox/moat/internal/moattest"
)

// cliEnv makes this test binary the moat command line when it is run
// through the "moat" wrapper moatBin writes.
const cliEnv = "MOAT_RECIPES_CLI"

func init() {
	if os.Getenv(cliEnv) == "1" {
		os.Unsetenv(cliEnv)
		os.Exit(cli.Main(os.Args[1:]))
	}
}

func TestMain(m *testing.M) {
	moattest.ExitIfRoot("recipes", "MOAT_RECIPES_AS_ROOT")
	os.Exit(m.Run())
}

// readmeEnv names a README to read instead of the repository's.
const readmeEnv = "MOAT_RECIPES_README"

// readmePath is MOAT_RECIPES_README, or the README.md at the root of the
// module this file was compiled from.
func readmePath(t *testing.T) string {
	if p := os.Getenv(readmeEnv); p != "" {
		return p
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot find this source file to locate README.md; set " + readmeEnv)
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "README.md")
}

// required are the recipes the README must have (issue: go, npm, pip and
// venvs, cargo, make and git).
var required = []string{"Go", "Node and npm", "Python and pip", "Rust and cargo", "make", "git"}

// refusalLine is a line of moat's refusal summary: "moat: KIND: ... (--flag
// ...)", its "... and N more" tail, or any line that says refused.
var refusalLine = regexp.MustCompile(`^moat: (.*\(--[a-z].*\)\s*$|\.\.\. and \d+ more|.*\brefus)`)

// TestRecipes runs every recipe of the README, each in its fixture.
func TestRecipes(t *testing.T) {
	path := readmePath(t)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the README (set %s to read another): %v", readmeEnv, err)
	}
	recipes, err := parseRecipes(string(data))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var names []string
	for _, r := range recipes {
		names = append(names, r.Name)
	}
	for _, want := range required {
		if !slices.Contains(names, want) {
			t.Errorf("%s: no \"### %s\" recipe (have %q)", path, want, names)
		}
	}
	moat := moatBin(t)
	for _, r := range recipes {
		t.Run(strings.ReplaceAll(r.Name, " ", "_"), func(t *testing.T) {
			t.Parallel()
			fx, ok := fixtures[r.Name]
			if !ok {
				t.Fatalf("%s:%d: no fixture for the recipe heading %q; known: %q (add one in fixtures_linux_test.go)", path, r.Line, r.Name, fixtureNames())
			}
			if len(r.Commands) == 0 {
				t.Fatalf("%s:%d: recipe %q has no line that starts with \"moat \"", path, r.Line, r.Name)
			}
			runRecipe(t, moat, r, fx)
		})
	}
}

// moatBin writes a "moat" that runs this test binary as the moat command
// line, and returns its directory, for the front of PATH.
func moatBin(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := fmt.Sprintf("#!/bin/sh\n%s=1 exec '%s' \"$@\"\n", cliEnv, strings.ReplaceAll(exe, "'", `'\''`))
	if err := moattest.WriteFile(filepath.Join(dir, "moat"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runRecipe makes r's fixture, rewrites each command to the stand-ins and
// runs it with /bin/sh in the project directory, in order.
func runRecipe(t *testing.T, moatDir string, r recipe, fx fixture) {
	need(t, fx.tools...)
	env := &fixtureEnv{t: t, project: t.TempDir(), commands: r.Commands}
	st := standIns{NpmRegistry: "127.0.0.2:0", Wheels: "/nonexistent-wheels"}
	fx.setup(env, &st)
	for i, cmd := range r.Commands {
		mapped, err := substitute(cmd, st)
		if err != nil {
			t.Fatalf("recipe %q, command %d %q: %v", r.Name, i+1, cmd, err)
		}
		t.Logf("recipe %q, command %d:\n  README: %s\n  runs:   %s", r.Name, i+1, cmd, mapped)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		c := exec.CommandContext(ctx, "/bin/sh", "-c", mapped)
		c.Dir = env.project
		c.Env = append(os.Environ(), "PATH="+moatDir+":"+os.Getenv("PATH"))
		var stdout, stderr strings.Builder
		c.Stdout, c.Stderr = &stdout, &stderr
		start := time.Now()
		err = c.Run()
		cancel()
		t.Logf("exit %v after %.1fs\n--- stdout\n%s--- stderr\n%s", err, time.Since(start).Seconds(), tail(stdout.String()), tail(stderr.String()))
		if err != nil {
			t.Fatalf("recipe %q, command %d failed (%v): %s\nstderr:\n%s", r.Name, i+1, err, mapped, tail(stderr.String()))
		}
		for _, l := range strings.Split(stderr.String(), "\n") {
			if refusalLine.MatchString(l) {
				t.Errorf("recipe %q, command %d succeeded but printed a refusal line: %q", r.Name, i+1, l)
			}
		}
	}
	if fx.check != nil {
		fx.check(env, &st)
	}
}

// tail is the last 4 KiB of s.
func tail(s string) string {
	if len(s) > 4096 {
		return "...\n" + s[len(s)-4096:]
	}
	return s
}

// need fails when a tool is missing: ./test.sh installs every one of
// them (moattest.Need).
func need(t *testing.T, tools ...string) {
	t.Helper()
	moattest.Need(t, tools...)
}
