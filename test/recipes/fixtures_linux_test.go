//go:build linux

package recipes_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/moattest"
)

// fixture is the project a recipe runs in: the tools it needs, what
// setup writes into the project directory (and which stand-ins it
// starts), and what check verifies once every command has passed.
type fixture struct {
	tools []string
	setup func(e *fixtureEnv, s *standIns)
	check func(e *fixtureEnv, s *standIns)
}

// fixtureEnv is one recipe's run: its test, project directory, the
// README's commands, and the npm registry when setup started one.
type fixtureEnv struct {
	t        *testing.T
	project  string
	commands []string
	npm      *npmRegistry
}

// fixtures maps each recipe heading to its project. A heading not listed
// fails the test.
var fixtures = map[string]fixture{
	"Go":               {tools: []string{"go"}, setup: goSetup},
	"An agent harness": {tools: []string{"go", "git"}, setup: func(e *fixtureEnv, s *standIns) { goSetup(e, s); gitInit(e) }},
	"Node and npm":     {tools: []string{"node", "npm"}, setup: npmSetup, check: npmCheck},
	"Python and pip":   {tools: []string{"python3"}, setup: pipSetup},
	"Rust and cargo":   {tools: []string{"cargo", "rustc"}, setup: cargoSetup},
	"make":             {tools: []string{"make", "cc"}, setup: makeSetup},
	"git":              {tools: []string{"git"}, setup: gitSetup, check: gitCheck},
}

// fixtureNames lists the headings fixtures knows, sorted.
func fixtureNames() []string {
	var n []string
	for k := range fixtures {
		n = append(n, k)
	}
	slices.Sort(n)
	return n
}

// write writes name->content under the project; a name ending in "*" is
// written executable, without the star.
func (e *fixtureEnv) write(files map[string]string) {
	e.t.Helper()
	writeFiles(e.t, e.project, files)
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		mode := os.FileMode(0o644)
		if strings.HasSuffix(name, "*") {
			name, mode = strings.TrimSuffix(name, "*"), 0o755
		}
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := moattest.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
}

// host runs argv on the host in the project and returns its output,
// failing the test if it fails.
func (e *fixtureEnv) host(argv ...string) string {
	e.t.Helper()
	c := exec.Command(argv[0], argv[1:]...)
	c.Dir = e.project
	out, err := c.CombinedOutput()
	if err != nil {
		e.t.Fatalf("host: %s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	return string(out)
}

// goSetup: a module with no dependencies, a package with a test, and a
// main package.
func goSetup(e *fixtureEnv, _ *standIns) {
	e.write(map[string]string{
		"go.mod":             "module example.com/recipe\n\ngo 1.21\n",
		"lib.go":             "package recipe\n\n// Greeting says hello to name.\nfunc Greeting(name string) string { return \"hello, \" + name }\n",
		"lib_test.go":        "package recipe\n\nimport \"testing\"\n\nfunc TestGreeting(t *testing.T) {\n\tif got := Greeting(\"moat\"); got != \"hello, moat\" {\n\t\tt.Fatalf(\"Greeting = %q\", got)\n\t}\n}\n",
		"cmd/recipe/main.go": "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/recipe\"\n)\n\nfunc main() { fmt.Println(recipe.Greeting(\"moat\")) }\n",
		"main.go":            "//go:build ignore\n\npackage main\n\nfunc main() {}\n",
	})
}

// npmDep is the fixture's one npm dependency, served by the registry.
const npmDep = "moat-recipe-dep"

// npmSetup: a package with one dependency from the registry stand-in and
// a test script that uses it.
func npmSetup(e *fixtureEnv, s *standIns) {
	e.npm = startNpmRegistry(e.t)
	s.NpmRegistry = e.npm.Addr
	e.write(map[string]string{
		"package.json": `{"name": "recipe-app", "version": "1.0.0", "private": true,
  "scripts": {"test": "node test.js", "start": "node index.js"},
  "dependencies": {"` + npmDep + `": "^1.0.0"}}
`,
		// A lockfile too, for a recipe that runs npm ci.
		"package-lock.json": npmLock(e.npm),
		"index.js":          "console.log(require('" + npmDep + "')());\n",
		"test.js":           "const assert = require('assert');\nassert.strictEqual(require('" + npmDep + "')(), '" + npmDep + " ok');\nconsole.log('test passed');\n",
	})
}

// npmLock is the package-lock.json (v3) of the fixture's package, its
// dependency resolved at the registry stand-in.
func npmLock(reg *npmRegistry) string {
	lock := map[string]any{
		"name": "recipe-app", "version": "1.0.0", "lockfileVersion": 3, "requires": true,
		"packages": map[string]any{
			"": map[string]any{"name": "recipe-app", "version": "1.0.0", "dependencies": map[string]string{npmDep: "^1.0.0"}},
			"node_modules/" + npmDep: map[string]any{
				"version":   "1.0.0",
				"resolved":  "http://" + reg.Addr + "/" + npmDep + "/-/" + tarballName(npmDep),
				"integrity": npmIntegrity(npmTarball(npmDep)),
			},
		},
	}
	b, err := json.MarshalIndent(lock, "", "  ")
	if err != nil {
		panic(err)
	}
	return string(b) + "\n"
}

// npmCheck: when the recipe allowed the registry, npm fetched from the
// stand-in and installed the dependency.
func npmCheck(e *fixtureEnv, _ *standIns) {
	mapped := false
	for _, c := range e.commands {
		mapped = mapped || strings.Contains(c, "registry.npmjs.org")
	}
	if !mapped {
		return
	}
	if e.npm.Tarballs.Load() == 0 {
		e.t.Errorf("the recipe allows registry.npmjs.org, but npm fetched no tarball from the stand-in (%d packuments)", e.npm.Packument.Load())
	}
	if _, err := os.Stat(filepath.Join(e.project, "node_modules", npmDep, "index.js")); err != nil {
		e.t.Errorf("the dependency is not installed: %v", err)
	}
}

// pipDep is the fixture's one Python dependency, a wheel the test builds.
const pipDep = "moat-recipe-dep"

// pipSetup: a project that imports its one requirement, and the wheels
// directory, outside the project, with a wheel for it and for every
// package the recipe's commands name (-p, --package, pip install).
func pipSetup(e *fixtureEnv, s *standIns) {
	mod := strings.ReplaceAll(pipDep, "-", "_")
	named := pipNames(e.commands)
	// main.py imports what the recipe installs by name (moat python -p
	// P main.py), or else the requirement.
	mainPy := "import " + mod + "\nprint(" + mod + ".OK)\n"
	if len(named) > 0 {
		mainPy = ""
		for _, n := range named {
			m := pyModule(n)
			mainPy += "import " + m + "\nprint(" + m + ".OK)\n"
		}
	}
	e.write(map[string]string{
		"requirements.txt": pipDep + "\n",
		"main.py":          mainPy,
		"test_main.py":     "import unittest\nimport " + mod + "\n\n\nclass T(unittest.TestCase):\n    def test_ok(self):\n        self.assertEqual(" + mod + ".OK, '" + pipDep + " ok')\n\n\nif __name__ == '__main__':\n    unittest.main()\n",
	})
	wheels := e.t.TempDir()
	if err := os.Chmod(wheels, 0o755); err != nil {
		e.t.Fatal(err)
	}
	s.Wheels = wheels
	for _, n := range append([]string{pipDep}, named...) {
		norm := pyModule(n)
		whl, err := moattest.Wheel(norm, "1.0.0", "a recipe fixture", moattest.WheelFile{Name: norm + "/__init__.py", Content: "OK = " + strconvQuote(n+" ok") + "\n"})
		if err != nil {
			e.t.Fatal(err)
		}
		if err := moattest.WriteFile(filepath.Join(wheels, norm+"-1.0.0-py3-none-any.whl"), whl, 0o644); err != nil {
			e.t.Fatal(err)
		}
	}
}

// pyModule is the module (and wheel) name of the project name n.
func pyModule(n string) string {
	return strings.ToLower(strings.NewReplacer("-", "_", ".", "_").Replace(n))
}

// strconvQuote is a Python string literal of s (names are plain ASCII).
func strconvQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "") + "'" }

// pipName is a requirement's project name at its start.
var pipName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*`)

// pipNames lists the packages commands install by name: the values of -p
// and --package, and the words after "pip install" that are not options,
// paths or files.
func pipNames(commands []string) []string {
	var out []string
	for _, c := range commands {
		f := strings.Fields(c)
		inPip := false
		for i := 0; i < len(f); i++ {
			w := strings.Trim(f[i], `'"`)
			switch {
			case (w == "-p" || w == "--package") && i+1 < len(f):
				i++
				out = append(out, pipName.FindString(strings.Trim(f[i], `'"`)))
			case strings.HasPrefix(w, "--package="):
				out = append(out, pipName.FindString(strings.TrimPrefix(w, "--package=")))
			case w == "install" && i > 0 && strings.HasSuffix(f[i-1], "pip"):
				inPip = true
			case inPip && (w == "-r" || w == "-c" || w == "--requirement" || w == "--find-links" || w == "-f" || w == "--index-url" || w == "-i"):
				i++
			case inPip && (strings.HasPrefix(w, "-") || strings.ContainsAny(w, "/;&|") || strings.HasSuffix(w, ".txt") || w == "."):
				if strings.ContainsAny(w, ";&|") {
					inPip = false
				}
			case inPip:
				if n := pipName.FindString(w); n != "" {
					out = append(out, n)
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(slices.DeleteFunc(out, func(s string) bool { return s == "" }))
}

// cargoDep is the fixture crate's one dependency, vendored.
const cargoDep = "moat-recipe-dep"

// cargoSetup: a crate (library with a test, and a binary) whose one
// dependency is vendored under vendor/, with crates.io replaced by that
// directory in .cargo/config.toml and cargo kept offline.
func cargoSetup(e *fixtureEnv, _ *standIns) {
	depFiles := map[string]string{
		"Cargo.toml": "[package]\nname = \"" + cargoDep + "\"\nversion = \"1.0.0\"\nedition = \"2021\"\n\n[lib]\npath = \"src/lib.rs\"\n",
		"src/lib.rs": "/// The base the fixture's answer adds one to.\npub fn base() -> u32 {\n    41\n}\n",
	}
	sums := map[string]string{}
	for name, content := range depFiles {
		sum := sha256.Sum256([]byte(content))
		sums[name] = hex.EncodeToString(sum[:])
	}
	checksum, err := json.Marshal(map[string]any{"files": sums, "package": nil})
	if err != nil {
		e.t.Fatal(err)
	}
	files := map[string]string{
		"Cargo.toml":         "[package]\nname = \"recipe-app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n" + cargoDep + " = \"1.0\"\n",
		"src/lib.rs":         "pub fn answer() -> u32 {\n    moat_recipe_dep::base() + 1\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn answer_is_42() {\n        assert_eq!(super::answer(), 42);\n    }\n}\n",
		"src/main.rs":        "fn main() {\n    println!(\"{}\", recipe_app::answer());\n}\n",
		".cargo/config.toml": "[source.crates-io]\nreplace-with = \"vendored-sources\"\n\n[source.vendored-sources]\ndirectory = \"vendor\"\n\n[net]\noffline = true\n",
		"vendor/" + cargoDep + "/.cargo-checksum.json": string(checksum),
	}
	for name, content := range depFiles {
		files["vendor/"+cargoDep+"/"+name] = content
	}
	e.write(files)
}

// makeSetup: a C program with build, test and run targets.
func makeSetup(e *fixtureEnv, _ *standIns) {
	e.write(map[string]string{
		"Makefile": "CC ?= cc\n\nall: hello\n\nhello: hello.c\n\t$(CC) -o hello hello.c\n\ntest: hello\n\t./hello | grep -q 'hello from make'\n\nrun: hello\n\t./hello\n\nclean:\n\trm -f hello\n\n.PHONY: all test run clean\n",
		"hello.c":  "#include <stdio.h>\n\nint main(void) {\n\tputs(\"hello from make\");\n\treturn 0;\n}\n",
	})
}

// gitInit makes the project a repository with one commit and an identity
// in its own config, so that a commit in the sandbox, whose home is
// empty, has an author.
func gitInit(e *fixtureEnv) {
	e.host("git", "init", "-q")
	e.host("git", "config", "user.name", "Recipe Test")
	e.host("git", "config", "user.email", "recipe@example.invalid")
	e.host("git", "config", "commit.gpgsign", "false")
	e.host("git", "add", "-A")
	e.host("git", "commit", "-q", "--allow-empty", "-m", "initial")
}

// gitSetup: a repository with one commit and a tracked file changed since,
// for the sandbox to commit.
func gitSetup(e *fixtureEnv, _ *standIns) {
	e.write(map[string]string{"notes.txt": "first\n"})
	gitInit(e)
	e.write(map[string]string{"notes.txt": "first\nsecond\n"})
}

// gitCheck: the sandbox made at least one commit.
func gitCheck(e *fixtureEnv, _ *standIns) {
	if n := strings.TrimSpace(e.host("git", "rev-list", "--count", "HEAD")); n == "1" {
		e.t.Errorf("the recipe made no commit (git log:\n%s)", e.host("git", "log", "--oneline"))
	}
}
