package moat_test

// Conventions of the module's layout, checked on its source: which
// packages may import which, and that every exported name is documented.
// The import checks ask `go list` for each target OS, so a file built only
// on darwin or windows cannot slip an import past them.

import (
	"bytes"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// listedPackage is what the checks read of `go list -json`.
type listedPackage struct {
	ImportPath string
	Dir        string
	Imports    []string
	Deps       []string
	// TestImports and XTestImports are what the package's tests import.
	TestImports  []string
	XTestImports []string
	Module       *struct{ Path string }
}

// goList runs `go list -json args...` at the module's root for goos and
// decodes every package it prints: none when the pattern matches only
// packages built for other systems.
func goList(t *testing.T, goos string, args ...string) []listedPackage {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	c := exec.Command(goTool, append([]string{"list", "-json"}, args...)...)
	c.Env = append(os.Environ(), "GOOS="+goos, "CGO_ENABLED=0")
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		t.Fatalf("go list %s (GOOS=%s): %v\n%s", strings.Join(args, " "), goos, err, stderr.String())
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// modulePath is the module's import path, from go.mod.
func modulePath(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return f[1]
		}
	}
	t.Fatal("go.mod names no module")
	return ""
}

// within reports whether import path p is pkg or below it.
func within(p, pkg string) bool { return p == pkg || strings.HasPrefix(p, pkg+"/") }

// The import direction is cli -> policy -> moat -> spec -> backend, and
// command-line packages stay out of the library. Each rule names the
// packages it applies to (a pattern for go list), whether it looks at
// every package they depend on or only at what they import directly, and
// which imports it forbids. A direct rule is for a package that reaches
// the forbidden one legitimately through another (internal/cli reaches the
// backend through moat).
func TestImportDirection(t *testing.T) {
	mod := modulePath(t)
	// under forbids path and everything below it; exactly forbids path
	// alone (the root package, whose subtree is the whole module).
	under := func(paths ...string) func(string) bool {
		return func(imp string) bool {
			for _, p := range paths {
				if within(imp, p) {
					return true
				}
			}
			return false
		}
	}
	cliOnly := under("github.com/spf13/cobra", "github.com/spf13/pflag", "github.com/pelletier/go-toml",
		"github.com/BurntSushi/toml", "github.com/creack/pty",
		mod+"/internal/cli", mod+"/policy", mod+"/cmd")
	// pathsLeaf is internal/paths and what it imports (aclplan, on
	// Windows): the one "lies under" that the leaves may share.
	pathsLeaf := func(imp string) bool { return imp == mod+"/internal/paths" || imp == mod+"/internal/aclplan" }
	// tests marks a rule that the package's own tests obey too.
	rules := []struct {
		name       string
		pattern    string
		transitive bool
		tests      bool
		forbidden  func(imp string) bool
	}{
		{"moat never depends on CLI-only packages", ".", true, false, cliOnly},
		{"internal/cli imports only moat and policy of the module", "./internal/cli/...", false, true,
			func(imp string) bool {
				// redact and redact/model are public packages that moat redact
				// and moat setup drive; hubtest is the fake hub setup's tests use;
				// moattest lets the exec tests take a layer away; hostinput
				// is the one reader of files a sandbox could have written
				// (config, policy documents, fragments, interpreters), a
				// leaf that imports nothing of the module; report/jsonv1 is
				// --report-json's document, which the server will share, and
				// settings the table its refusals name; quarantine is
				// moat quarantine's reader and restorer, a leaf too, kept
				// out of the root so that restoring is never offered to
				// programs (an API, MCP).
				return within(imp, mod) && imp != mod && imp != mod+"/policy" && imp != mod+"/ipc" && !within(imp, mod+"/internal/cli") &&
					imp != mod+"/internal/hostinput" && imp != mod+"/internal/report/jsonv1" && imp != mod+"/internal/settings" &&
					imp != mod+"/internal/quarantine" && imp != mod+"/internal/termsafe" && imp != mod+"/internal/paths" &&
					imp != mod+"/internal/report/jsonv1/schematest" && // test helper, like moattest
					!within(imp, mod+"/redact") && imp != mod+"/internal/hfhub/hubtest" &&
					imp != mod+"/internal/moattest" // test helper; "no production code" below keeps it out of the binary
			}},
		{"ipc depends on nothing else of the module", "./ipc/...", true, false,
			func(imp string) bool { return within(imp, mod) && !within(imp, mod+"/ipc") }},
		// internal/paths is the one "lies under" (on Windows through
		// aclplan's NTFS comparison).
		{"hostinput depends on nothing else of the module but paths", "./internal/hostinput/...", true, false,
			func(imp string) bool {
				return within(imp, mod) && !within(imp, mod+"/internal/hostinput") && !pathsLeaf(imp)
			}},
		// quarantine is a leaf but for hostiletree, the removal of trees a
		// sandbox wrote that it shares with cachehome; hostiletree is a
		// leaf itself.
		{"quarantine depends on nothing else of the module but hostiletree, termsafe and paths", "./internal/quarantine/...", true, false,
			func(imp string) bool {
				return within(imp, mod) && !within(imp, mod+"/internal/quarantine") && imp != mod+"/internal/hostiletree" && imp != mod+"/internal/termsafe" && !pathsLeaf(imp)
			}},
		{"termsafe depends on nothing else of the module", "./internal/termsafe/...", true, true,
			func(imp string) bool { return within(imp, mod) && !within(imp, mod+"/internal/termsafe") }},
		{"hostiletree depends on nothing else of the module", "./internal/hostiletree/...", true, true,
			func(imp string) bool { return within(imp, mod) && !within(imp, mod+"/internal/hostiletree") }},
		{"backends import nothing above them", "./internal/backend/...", true, false,
			func(imp string) bool { return imp == mod || under(mod+"/policy", mod+"/internal/cli", mod+"/cmd")(imp) }},
		{"policy does not depend on the CLI", "./policy/...", true, false, under(mod+"/internal/cli", mod+"/cmd")},
		{"policy reaches no backend past moat", "./policy/...", false, true,
			under(mod+"/internal/backend", mod+"/internal/cgroup", "github.com/spf13")},
		{"settings depends on nothing else of the module", "./internal/settings/...", true, true,
			func(imp string) bool { return within(imp, mod) && !within(imp, mod+"/internal/settings") }},
		{"size depends on nothing else of the module", "./internal/size/...", true, true,
			func(imp string) bool { return within(imp, mod) && !within(imp, mod+"/internal/size") }},
		{"report/jsonv1 depends only on moat, settings and bytestr", "./internal/report/...", false, false,
			func(imp string) bool {
				return within(imp, mod) && imp != mod && imp != mod+"/internal/settings" && imp != mod+"/internal/bytestr" && !within(imp, mod+"/internal/report")
			}},
		{"spec depends on nothing else of the module", "./internal/spec/...", true, false,
			func(imp string) bool { return within(imp, mod) && !within(imp, mod+"/internal/spec") }},
		{"no production code depends on the test helpers", "./...", true, false,
			under(mod+"/internal/moattest", mod+"/internal/report/jsonv1/schematest")},
	}
	for _, goos := range []string{"linux", "darwin", "windows"} {
		for _, r := range rules {
			t.Run(goos+"/"+r.name, func(t *testing.T) {
				pkgs := goList(t, goos, r.pattern)
				if len(pkgs) == 0 && goos == "linux" {
					t.Fatalf("%s matches no package", r.pattern)
				}
				for _, p := range pkgs {
					imports := p.Imports
					if r.transitive {
						imports = p.Deps
					}
					if r.tests {
						imports = append(append(append([]string(nil), imports...), p.TestImports...), p.XTestImports...)
					}
					for _, imp := range imports {
						if r.forbidden(imp) {
							t.Errorf("%s imports %s", p.ImportPath, imp)
						}
					}
				}
			})
		}
	}
}

// The import checks themselves find a forbidden import where there is one:
// internal/cli does depend on cobra.
func TestImportDirectionControl(t *testing.T) {
	found := false
	for _, p := range goList(t, runtime.GOOS, "-deps", "./internal/cli") {
		found = found || p.ImportPath == "github.com/spf13/cobra"
	}
	if !found {
		t.Fatal("control: go list -deps ./internal/cli does not list cobra, so the import checks may see nothing")
	}
}

// undocumented lists the exported names declared in the Go source src
// (one file) that have no doc comment: functions, methods of exported
// types, types, constants and variables. A constant or variable in a
// parenthesised group is documented by the group's comment too, or by a
// comment at the end of its line. Struct fields and interface methods may
// go without.
func undocumented(fset *token.FileSet, f *ast.File) []string {
	var out []string
	pos := func(n ast.Node) string { return fset.Position(n.Pos()).String() }
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || d.Doc != nil {
				continue
			}
			if d.Recv != nil && len(d.Recv.List) > 0 {
				typ := d.Recv.List[0].Type
				for {
					switch x := typ.(type) {
					case *ast.StarExpr:
						typ = x.X
						continue
					case *ast.IndexExpr:
						typ = x.X
						continue
					case *ast.IndexListExpr:
						typ = x.X
						continue
					}
					break
				}
				if id, ok := typ.(*ast.Ident); !ok || !id.IsExported() {
					continue
				}
				out = append(out, pos(d)+": method "+typ.(*ast.Ident).Name+"."+d.Name.Name)
				continue
			}
			out = append(out, pos(d)+": func "+d.Name.Name)
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() && s.Doc == nil && (d.Doc == nil || d.Lparen.IsValid()) {
						out = append(out, pos(s)+": type "+s.Name.Name)
					}
				case *ast.ValueSpec:
					if s.Doc != nil || d.Doc != nil || s.Comment != nil {
						continue
					}
					for _, n := range s.Names {
						if n.IsExported() {
							out = append(out, pos(n)+": "+d.Tok.String()+" "+n.Name)
						}
					}
				}
			}
		}
	}
	return out
}

// Every exported name of every package of the module has a doc comment,
// and so does every package. Files of every OS are read, whatever their
// build constraints; tests and generated files are not.
func TestExportedNamesDocumented(t *testing.T) {
	fset := token.NewFileSet()
	var missing []string
	docs := map[string]bool{} // directory -> has a package comment
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		dir := filepath.Dir(path)
		docs[dir] = docs[dir] || f.Doc != nil
		missing = append(missing, undocumented(fset, f)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir, ok := range docs {
		if !ok {
			missing = append(missing, dir+": package comment")
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("%d exported name(s) or package(s) without a doc comment:\n%s", len(missing), strings.Join(missing, "\n"))
	}
}

// The check finds what is missing, and only that.
func TestExportedNamesDocumentedControl(t *testing.T) {
	const src = `package p

// Documented is documented.
func Documented() {}

func Bare() {}

func unexported() {}

type T struct{ Field int }

// U is documented.
type U struct{}

func (U) Method() {}

// Method is documented.
func (*T) Method2() {}

func (u) Hidden() {}

type u struct{}

const (
	// A is documented.
	A = 1
	B = 2 // B is documented at the end of its line.
	C = 3
)

// Group documents its members.
const (
	D = 4
)

var V int
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range undocumented(fset, f) {
		got = append(got, m[strings.Index(m, ": ")+2:])
	}
	want := []string{"func Bare", "type T", "method U.Method", "const C", "var V"}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("undocumented = %q, want %q", got, want)
	}
}
