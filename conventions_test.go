package moat_test

// Conventions of the module's layout, checked on its source: which
// packages may import which, and that every exported name is documented.
// The import checks ask `go list` for each target OS, so a file built only
// on darwin or windows cannot slip an import past them.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
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
	// exactlyRootOrAbove forbids the root package and what imports it.
	exactlyRootOrAbove := func(imp string) bool {
		return imp == mod || under(mod+"/policy", mod+"/internal/cli", mod+"/cmd")(imp)
	}
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
					imp != mod+"/internal/hostprobe" && // moat doctor's probe of the host, never the library's
					imp != mod+"/internal/session" && imp != mod+"/internal/serve" && // moat serve's session core and HTTP face
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
		// runjournal is host plumbing below moat: the journal, its sweep
		// and the git control check; never the root or the front ends.
		{"runjournal imports nothing above it", "./internal/runjournal/...", true, false,
			func(imp string) bool { return imp == mod || under(mod+"/policy", mod+"/internal/cli", mod+"/cmd")(imp) }},
		{"termsafe depends on nothing else of the module", "./internal/termsafe/...", true, true,
			func(imp string) bool { return within(imp, mod) && !within(imp, mod+"/internal/termsafe") }},
		{"hostiletree depends on nothing else of the module", "./internal/hostiletree/...", true, true,
			func(imp string) bool { return within(imp, mod) && !within(imp, mod+"/internal/hostiletree") }},
		{"ipchost imports nothing above it", "./internal/ipchost/...", true, true,
			func(imp string) bool { return imp == mod || under(mod+"/policy", mod+"/internal/cli", mod+"/cmd")(imp) }},
		{"pysandbox imports nothing above it", "./internal/pysandbox/...", true, true,
			func(imp string) bool { return imp == mod || under(mod+"/policy", mod+"/internal/cli", mod+"/cmd")(imp) }},
		{"auditlog imports nothing above it", "./internal/auditlog/...", true, true, exactlyRootOrAbove},
		{"hostprobe imports nothing above it", "./internal/hostprobe/...", true, true, exactlyRootOrAbove},
		{"backends import nothing above them", "./internal/backend/...", true, false,
			func(imp string) bool { return imp == mod || under(mod+"/policy", mod+"/internal/cli", mod+"/cmd")(imp) }},
		{"policy does not depend on the CLI", "./policy/...", true, false, under(mod+"/internal/cli", mod+"/cmd")},
		{"policy reaches no backend past moat", "./policy/...", false, true,
			under(mod+"/internal/backend", mod+"/internal/cgroup", "github.com/spf13")},
		{"settings depends on nothing else of the module", "./internal/settings/...", true, true,
			func(imp string) bool { return within(imp, mod) && !within(imp, mod+"/internal/settings") }},
		{"size depends on nothing else of the module", "./internal/size/...", true, true,
			func(imp string) bool { return within(imp, mod) && !within(imp, mod+"/internal/size") }},
		{"hostfacts depends on nothing else of the module", "./internal/hostfacts/...", true, true,
			func(imp string) bool { return within(imp, mod) && !within(imp, mod+"/internal/hostfacts") }},
		{"report/jsonv1 depends only on moat, settings and bytestr", "./internal/report/...", false, false,
			func(imp string) bool {
				return within(imp, mod) && imp != mod && imp != mod+"/internal/settings" && imp != mod+"/internal/bytestr" && !within(imp, mod+"/internal/report")
			}},
		// The host checks moved out of the root take what they need as
		// values: none of them reaches back up into moat.
		{"fileid depends on nothing else of the module", "./internal/fileid/...", true, true,
			func(imp string) bool { return within(imp, mod) && !within(imp, mod+"/internal/fileid") }},
		{"lookpath imports nothing else of the module but paths", "./internal/lookpath/...", false, true,
			func(imp string) bool {
				return within(imp, mod) && !within(imp, mod+"/internal/lookpath") && imp != mod+"/internal/paths"
			}},
		{"limitkill depends on nothing else of the module but settings and size", "./internal/limitkill/...", true, true,
			func(imp string) bool {
				return within(imp, mod) && !within(imp, mod+"/internal/limitkill") && imp != mod+"/internal/settings" && imp != mod+"/internal/size"
			}},
		{"workdircheck does not depend on moat", "./internal/workdircheck/...", true, true,
			func(imp string) bool { return imp == mod }},
		{"spec depends on nothing else of the module", "./internal/spec/...", true, false,
			func(imp string) bool { return within(imp, mod) && !within(imp, mod+"/internal/spec") }},
		// The root's refusals, pre-start checks, build mode and disk limits
		// moved down into these: they are given values and hooks, and
		// never reach back up into the root.
		{"refusal depends on nothing else of the module but settings, spec, proxy and hostpattern", "./internal/refusal/...", true, true,
			func(imp string) bool {
				return within(imp, mod) && !within(imp, mod+"/internal/refusal") && imp != mod+"/internal/settings" &&
					imp != mod+"/internal/spec" && !within(imp, mod+"/internal/proxy") && imp != mod+"/internal/hostpattern"
			}},
		{"prestart imports nothing above it", "./internal/prestart/...", true, true, exactlyRootOrAbove},
		{"buildmode imports nothing above it", "./internal/buildmode/...", true, true, exactlyRootOrAbove},
		{"disklimit imports nothing above it", "./internal/disklimit/...", true, true, exactlyRootOrAbove},
		{"no production code depends on the test helpers", "./...", true, false,
			under(mod+"/internal/moattest", mod+"/internal/report/jsonv1/schematest", mod+"/internal/golden")},
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

// The per-OS file name scheme (docs/testing.md): a file built on some
// systems only says where in its name, with one of these suffixes (before
// _test.go):
//
//	_linux, _darwin, _windows  built on that system only
//	_unix                      built on Unix systems only, never on Windows
//	                           (a //go:build line: unix, unix && !linux, …)
//	_other                     the fallback: built where the others are not
//	                           (a //go:build line: !unix, !linux, …)
//
// and a file built everywhere has none. Other system words (_nounix,
// _notlinux, _platform, _bsd, _posix, _freebsd, …) are not used.
var osSuffixes = map[string]bool{"linux": true, "darwin": true, "windows": true, "unix": true, "other": true}

// osCheckedGOOS are the systems osNameProblem asks a file's constraint
// about: the three moat supports, another Unix, and one that is neither.
var osCheckedGOOS = []string{"linux", "darwin", "windows", "freebsd", "js"}

// knownGOOS and knownGOARCH are the names Go's file-name rule recognises
// (name_GOOS.go, name_GOARCH.go, name_GOOS_GOARCH.go); unixGOOS are the
// systems the unix build tag holds on.
var (
	knownGOOS = map[string]bool{"aix": true, "android": true, "darwin": true, "dragonfly": true, "freebsd": true,
		"hurd": true, "illumos": true, "ios": true, "js": true, "linux": true, "nacl": true, "netbsd": true,
		"openbsd": true, "plan9": true, "solaris": true, "wasip1": true, "windows": true, "zos": true}
	knownGOARCH = map[string]bool{"386": true, "amd64": true, "arm": true, "arm64": true, "loong64": true,
		"mips": true, "mips64": true, "mips64le": true, "mipsle": true, "ppc64": true, "ppc64le": true,
		"riscv64": true, "s390x": true, "wasm": true}
	unixGOOS = map[string]bool{"aix": true, "android": true, "darwin": true, "dragonfly": true, "freebsd": true,
		"hurd": true, "illumos": true, "ios": true, "linux": true, "netbsd": true, "openbsd": true, "solaris": true}
	// osWord is a suffix that names a system or a set of them.
	osWord = regexp.MustCompile(`^(?:no|not|non)?(?:unix|linux|darwin|windows|macos|bsd|posix|platform)$`)
)

// nameParts returns the words of a Go file's name after its first, without
// .go and _test: "a_b_linux_test.go" gives [b linux].
func nameParts(name string) []string {
	base := strings.TrimSuffix(strings.TrimSuffix(name, ".go"), "_test")
	parts := strings.Split(base, "_")
	return parts[1:]
}

// nameGOOS is the system Go's file-name rule restricts name to, or "".
func nameGOOS(name string) string {
	p := nameParts(name)
	n := len(p)
	switch {
	case n >= 2 && knownGOOS[p[n-2]] && knownGOARCH[p[n-1]]:
		return p[n-2]
	case n >= 1 && knownGOOS[p[n-1]]:
		return p[n-1]
	}
	return ""
}

// nameSuffix is the system word at the end of name ("" if none): the GOOS
// of name_GOOS_GOARCH.go, or the last word if it names a system.
func nameSuffix(name string) string {
	if goos := nameGOOS(name); goos != "" {
		return goos
	}
	if p := nameParts(name); len(p) > 0 && (osSuffixes[p[len(p)-1]] || osWord.MatchString(p[len(p)-1])) {
		return p[len(p)-1]
	}
	return ""
}

// midWords returns the words of name before its system suffix that name a
// system ("platform" in a_platform_other.go).
func midWords(name string) []string {
	p := nameParts(name)
	end := len(p)
	if nameGOOS(name) != "" && len(p) >= 2 && knownGOARCH[p[len(p)-1]] {
		end -= 2
	} else if nameSuffix(name) != "" {
		end--
	}
	var words []string
	for _, w := range p[:end] {
		if osWord.MatchString(w) {
			words = append(words, w)
		}
	}
	return words
}

// buildsOn returns those of osCheckedGOOS a file is built on, by its
// name and its //go:build line, for some value of the tags that do not
// name a system.
func buildsOn(name string, src []byte) ([]string, error) {
	var expr constraint.Expr
	for _, line := range strings.Split(string(src), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "package ") {
			break
		}
		if constraint.IsGoBuild(line) {
			e, err := constraint.Parse(line)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", name, err)
			}
			expr = e
			break
		}
	}
	var free []string // tags that do not name a system
	if expr != nil {
		expr.Eval(func(tag string) bool {
			if !knownGOOS[tag] && tag != "unix" && !slices.Contains(free, tag) {
				free = append(free, tag)
			}
			return false
		})
	}
	if len(free) > 12 {
		return nil, fmt.Errorf("%s: too many build tags to try", name)
	}
	var on []string
	for _, goos := range osCheckedGOOS {
		if g := nameGOOS(name); g != "" && g != goos {
			continue
		}
		ok := expr == nil
		for set := 0; !ok && set < 1<<len(free); set++ {
			ok = expr.Eval(func(tag string) bool {
				switch {
				case tag == "unix":
					return unixGOOS[goos]
				case knownGOOS[tag]:
					return tag == goos
				}
				return set&(1<<slices.Index(free, tag)) != 0
			})
		}
		if ok {
			on = append(on, goos)
		}
	}
	return on, nil
}

// wantSuffix is the scheme's suffix for a file built on the systems on.
func wantSuffix(on []string) string {
	switch {
	case len(on) == len(osCheckedGOOS):
		return ""
	case len(on) == 1 && osSuffixes[on[0]]:
		return on[0]
	case !slices.Contains(on, "windows") && (!slices.Contains(on, "js") || slices.Contains(on, "linux") || slices.Contains(on, "darwin")):
		return "unix" // Unix only, or everything but Windows
	}
	return "other"
}

// osNameProblem says how the Go file name, whose content is src, breaks
// the per-OS naming scheme, or "" if it follows it.
func osNameProblem(name string, src []byte) (string, error) {
	on, err := buildsOn(name, src)
	if err != nil {
		return "", err
	}
	if w := midWords(name); len(w) > 0 {
		return fmt.Sprintf("_%s is not a suffix of the scheme (only the last word names the system)", strings.Join(w, "_")), nil
	}
	have, want := nameSuffix(name), wantSuffix(on)
	switch {
	case len(on) == 0, have == want: // built nowhere asked: not judged
		return "", nil
	case have != "" && !osSuffixes[have]:
		if want == "" {
			return fmt.Sprintf("_%s is not a suffix of the scheme (built everywhere: drop it)", have), nil
		}
		return fmt.Sprintf("_%s is not a suffix of the scheme (built on %s: name it _%s)", have, strings.Join(on, ", "), want), nil
	case want == "":
		return fmt.Sprintf("built on every system, but named _%s", have), nil
	}
	return fmt.Sprintf("built on %s only: name it _%s", strings.Join(on, ", "), want), nil
}

// TestConventionOSFileSuffixes checks every Go file's name against the
// per-OS scheme, and lists every file that breaks it.
func TestConventionOSFileSuffixes(t *testing.T) {
	t.Run("control", func(t *testing.T) {
		for _, tc := range []struct{ name, src, want string }{
			{"a.go", "package a", ""},
			{"a_linux.go", "package a", ""},
			{"a_linux_test.go", "//go:build linux\n\npackage a", ""},
			{"a_linux_amd64.go", "package a", ""},
			{"a_other_linux.go", "//go:build !amd64\n\npackage a", ""},
			{"a_unix.go", "//go:build unix\n\npackage a", ""},
			{"a_unix.go", "//go:build unix && !linux\n\npackage a", ""},
			{"a_unix.go", "//go:build linux || darwin\n\npackage a", ""},
			{"a_unix.go", "//go:build !windows\n\npackage a", ""},
			{"a_other.go", "//go:build !unix\n\npackage a", ""},
			{"a_other.go", "//go:build !linux && !darwin && !windows\n\npackage a", ""},
			{"a_x86.go", "package a", ""},
			{"a_onnx.go", "//go:build onnx && cgo\n\npackage a", ""},
			{"a_test.go", "//go:build linux\n\npackage a", "built on linux only: name it _linux"},
			{"a_nounix.go", "//go:build !unix\n\npackage a", "_nounix is not a suffix of the scheme (built on windows, js: name it _other)"},
			{"a_platform_other.go", "//go:build !linux\n\npackage a", "_platform is not a suffix of the scheme (only the last word names the system)"},
			{"a_nolinux_amd64.go", "package a", "_nolinux is not a suffix of the scheme (only the last word names the system)"},
			{"a_other.go", "//go:build !linux\n\npackage a", ""},
			{"a_other.go", "//go:build !linux && !darwin\n\npackage a", ""},
			{"a_unix.go", "//go:build darwin || freebsd || netbsd\n\npackage a", ""},
			{"a_unix.go", "//go:build !unix\n\npackage a", "built on windows, js only: name it _other"},
			{"a_platform.go", "package a", "_platform is not a suffix of the scheme (built everywhere: drop it)"},
			{"a_bsd.go", "//go:build darwin || freebsd\n\npackage a", "_bsd is not a suffix of the scheme (built on darwin, freebsd: name it _unix)"},
			{"a_freebsd.go", "package a", "_freebsd is not a suffix of the scheme (built on freebsd: name it _unix)"},
			{"a_unix.go", "package a", "built on every system, but named _unix"},
			{"a_other.go", "//go:build !windows\n\npackage a", "built on linux, darwin, freebsd, js only: name it _unix"},
			{"a_linux.go", "//go:build darwin\n\npackage a", ""}, // built nowhere: not judged
			{"other.go", "//go:build !unix\n\npackage a", "built on windows, js only: name it _other"},
			{"a.go", "//go:build !windows\n\npackage a", "built on linux, darwin, freebsd, js only: name it _unix"},
		} {
			got, err := osNameProblem(tc.name, []byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("osNameProblem(%q, %q) = %q; want %q", tc.name, tc.src, got, tc.want)
			}
		}
	})

	var bad []string
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
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		problem, err := osNameProblem(name, src)
		if err != nil {
			return err
		}
		if problem != "" {
			bad = append(bad, filepath.ToSlash(path)+": "+problem)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Errorf("%d file(s) break the per-OS naming scheme (docs/testing.md):\n%s", len(bad), strings.Join(bad, "\n"))
	}
}
