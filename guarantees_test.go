package moat_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// GUARANTEES.md names the functions that enforce each promise and the tests
// that attack it. These patterns find what it names: a test function, and a
// Go file given by its path from the module root.
var (
	docTestName = regexp.MustCompile(`\bTest[A-Z]\w*`)
	docGoFile   = regexp.MustCompile(`(?:[A-Za-z0-9_.\-]+/)*[A-Za-z0-9_\-]+\.go\b`)
	testFunc    = regexp.MustCompile(`(?m)^func (Test[A-Z]\w*)\(`)
)

// docShorthand is the prefix GUARANTEES.md leaves out of the Linux
// backend's files ("linux/host_policy_linux.go").
const docShorthand = "internal/backend/"

// docNames returns the test names and Go file paths text refers to, each
// once, in order of first appearance.
func docNames(text string) (tests, files []string) {
	for _, m := range docTestName.FindAllString(text, -1) {
		if !slices.Contains(tests, m) {
			tests = append(tests, m)
		}
	}
	for _, m := range docGoFile.FindAllString(text, -1) {
		if !slices.Contains(files, m) {
			files = append(files, m)
		}
	}
	return tests, files
}

// moduleRoot walks up from the working directory to the directory that
// holds go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// moduleTests returns the names of the test functions in the module's
// _test.go files, leaving out hidden directories, testdata, vendor and
// nested modules.
func moduleTests(t *testing.T, root string) map[string]bool {
	t.Helper()
	found := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != root {
				if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor" {
					return filepath.SkipDir
				}
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir // another module
				}
			}
			return nil
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range testFunc.FindAllSubmatch(b, -1) {
			found[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// fileExists reports whether the Go file rel, as GUARANTEES.md spells it,
// exists under root.
func fileExists(root, rel string) bool {
	for _, p := range []string{rel, docShorthand + rel} {
		if fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err == nil && fi.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// TestGuaranteesDocNamesExist keeps GUARANTEES.md honest as code moves:
// every test it names is a test function somewhere in the module, and
// every Go file it names exists.
func TestGuaranteesDocNamesExist(t *testing.T) {
	t.Run("extraction", func(t *testing.T) {
		for _, tc := range []struct {
			name, text string
			tests      []string
			files      []string
		}{
			{"plain", "TestFSEtc reads `/etc`", []string{"TestFSEtc"}, nil},
			{"list", "TestA1, TestB_c and TestA1", []string{"TestA1", "TestB_c"}, nil},
			{"not a test", "Testing, Test, Testdata, TestMainly", []string{"TestMainly"}, nil},
			{"root file", "`backend.go: Sandbox.policy`", nil, []string{"backend.go"}},
			{"deep file", "`internal/hostview/view.go: View`", nil, []string{"internal/hostview/view.go"}},
			{"shorthand", "`linux/host_policy_linux.go: Engine.assess`", nil, []string{"linux/host_policy_linux.go"}},
			{"not a file", "go.mod, golang.org/x/net, go build, cargo.toml", nil, nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				tests, files := docNames(tc.text)
				if !slices.Equal(tests, tc.tests) || !slices.Equal(files, tc.files) {
					t.Fatalf("docNames(%q) = %q, %q; want %q, %q", tc.text, tests, files, tc.tests, tc.files)
				}
			})
		}
	})

	root := moduleRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "GUARANTEES.md"))
	if err != nil {
		t.Fatal(err)
	}
	tests, files := docNames(string(doc))
	// A pattern that stopped matching would pass everything: the document
	// names far more than this.
	if len(tests) < 100 || len(files) < 50 {
		t.Fatalf("GUARANTEES.md: found only %d test names and %d Go files; is the extraction broken?", len(tests), len(files))
	}
	defined := moduleTests(t, root)
	var missing []string
	for _, name := range tests {
		if !defined[name] {
			missing = append(missing, "test "+name)
		}
	}
	for _, f := range files {
		if !fileExists(root, f) {
			missing = append(missing, "file "+f)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("GUARANTEES.md names %d things that do not exist (renamed or moved? update the document):\n  %s",
			len(missing), strings.Join(missing, "\n  "))
	}
	t.Logf("GUARANTEES.md: %d test names and %d Go files, all found", len(tests), len(files))
}

// A reference in GUARANTEES.md is `path/file.go: Name` (Name is a function,
// type, variable, constant or test, or Type.Method), and the code spans that
// follow it in a list, `file.go: A`, `B` and `C`, name more things in the
// same file.
var (
	docSpan    = regexp.MustCompile("`([^`\n]*)`")
	docRefHead = regexp.MustCompile(`^((?:[A-Za-z0-9_.\-]+/)*[A-Za-z0-9_\-]+\.go): ([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)$`)
	docRefMore = regexp.MustCompile(`^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?$`)
	docListSep = regexp.MustCompile(`^(?:,|,? and)\s*$`)
)

// docRef is one name GUARANTEES.md says a file declares.
type docRef struct {
	Line int    // 1-based line of GUARANTEES.md
	File string // as the document spells it; the whole span if Name is ""
	Name string // Name or Type.Method; "" for a malformed reference
}

// docRefs returns every `file.go: Name` reference in text, and the names
// listed after it, in order.
func docRefs(text string) []docRef {
	var refs []docRef
	file, prevEnd := "", -1 // file is "" outside a list
	for _, m := range docSpan.FindAllStringSubmatchIndex(text, -1) {
		span := text[m[2]:m[3]]
		line := 1 + strings.Count(text[:m[0]], "\n")
		switch {
		case docRefHead.MatchString(span):
			h := docRefHead.FindStringSubmatch(span)
			file = h[1]
			refs = append(refs, docRef{line, file, h[2]})
		case strings.Contains(span, ".go: "):
			// Looks like a reference but names no declaration the check
			// can find: reported, not skipped.
			file = ""
			refs = append(refs, docRef{line, span, ""})
		case file != "" && docListSep.MatchString(text[prevEnd:m[0]]) && docRefMore.MatchString(span) && !strings.HasSuffix(span, ".go"):
			refs = append(refs, docRef{line, file, span})
		default:
			file = ""
		}
		prevEnd = m[1]
	}
	return refs
}

// goDecls returns the names the Go file at path declares at top level: each
// function, type, variable and constant as Name, and each method both as
// Type.Method and as Method.
func goDecls(path string) (map[string]bool, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			names[d.Name.Name] = true
			if d.Recv != nil && len(d.Recv.List) == 1 {
				if recv := recvType(d.Recv.List[0].Type); recv != "" {
					names[recv+"."+d.Name.Name] = true
				}
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					names[s.Name.Name] = true
				case *ast.ValueSpec:
					for _, n := range s.Names {
						names[n.Name] = true
					}
				}
			}
		}
	}
	return names, nil
}

// recvType is the name of a method's receiver type: T for T, *T, T[K] and
// *T[K].
func recvType(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// staleRefs checks refs against the files under root and returns one line
// per reference that names a missing file or a name its file does not
// declare, as doc:line: file: Name.
func staleRefs(root, doc string, refs []docRef) []string {
	var stale []string
	decls := map[string]map[string]bool{}
	for _, r := range refs {
		if r.Name == "" {
			stale = append(stale, fmt.Sprintf("%s:%d: `%s` is not a `file.go: Name` reference", doc, r.Line, r.File))
			continue
		}
		names, seen := decls[r.File]
		if !seen {
			for _, p := range []string{r.File, docShorthand + r.File} {
				full := filepath.Join(root, filepath.FromSlash(p))
				if fi, err := os.Stat(full); err == nil && fi.Mode().IsRegular() {
					if names, err = goDecls(full); err != nil {
						stale = append(stale, fmt.Sprintf("%s:%d: %s: %v", doc, r.Line, r.File, err))
						names = map[string]bool{}
					}
					break
				}
			}
			decls[r.File] = names // nil: no such file
		}
		switch {
		case names == nil:
			stale = append(stale, fmt.Sprintf("%s:%d: %s: no such file (for %s)", doc, r.Line, r.File, r.Name))
		case !names[r.Name]:
			stale = append(stale, fmt.Sprintf("%s:%d: %s: %s is not declared there", doc, r.Line, r.File, r.Name))
		}
	}
	return stale
}

// TestGuaranteesDocReferencesDeclared checks every `file.go: Name`
// reference GUARANTEES.md makes: the file exists and declares Name. It
// reports every stale reference at once, with its line.
func TestGuaranteesDocReferencesDeclared(t *testing.T) {
	t.Run("control", func(t *testing.T) {
		// A synthetic module and document: every wrong reference must be
		// reported, or the check could not fail.
		root := t.TempDir()
		for name, src := range map[string]string{
			"a.go":                              "package a\n\nfunc Run() {}\n\ntype Box[K any] struct{}\n\nfunc (b *Box[K]) Open() {}\n\nvar limit, cap2 = 1, 2\n\nconst (\n\tmax = 3\n)\n",
			"internal/backend/linux/b_linux.go": "package linux\n\ntype Engine struct{}\n\nfunc (Engine) assess() {}\n",
			"x_test.go":                         "package a\n\nimport \"testing\"\n\nfunc TestRun(t *testing.T) {}\n",
		} {
			p := filepath.Join(root, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for _, tc := range []struct {
			name, text string
			refs       []docRef
			stale      []string
		}{
			{"all found", "`a.go: Run`, `Box.Open`, `Open` and `limit`; `x_test.go: TestRun`\n| `linux/b_linux.go: Engine.assess`, `Engine` |",
				[]docRef{{1, "a.go", "Run"}, {1, "a.go", "Box.Open"}, {1, "a.go", "Open"}, {1, "a.go", "limit"}, {1, "x_test.go", "TestRun"}, {2, "linux/b_linux.go", "Engine.assess"}, {2, "linux/b_linux.go", "Engine"}},
				nil},
			{"list across lines", "`a.go: Run`,\n`max`", []docRef{{1, "a.go", "Run"}, {2, "a.go", "max"}}, nil},
			{"wrong name", "see `a.go: Walk`", []docRef{{1, "a.go", "Walk"}}, []string{"G.md:1: a.go: Walk is not declared there"}},
			{"wrong method", "\n`a.go: Box.Close`", []docRef{{2, "a.go", "Box.Close"}}, []string{"G.md:2: a.go: Box.Close is not declared there"}},
			{"wrong receiver", "`linux/b_linux.go: Box.assess`", []docRef{{1, "linux/b_linux.go", "Box.assess"}}, []string{"G.md:1: linux/b_linux.go: Box.assess is not declared there"}},
			{"wrong name in a list", "`a.go: Run`, `Stop`", []docRef{{1, "a.go", "Run"}, {1, "a.go", "Stop"}}, []string{"G.md:1: a.go: Stop is not declared there"}},
			{"moved file", "`gone.go: Run` and `c.go: X`", []docRef{{1, "gone.go", "Run"}, {1, "c.go", "X"}}, []string{"G.md:1: gone.go: no such file (for Run)", "G.md:1: c.go: no such file (for X)"}},
			{"not a list", "`a.go: Run` (`Stop`), `Halt`; `Stop` → `Halt`, `a.go`, `Nope`", []docRef{{1, "a.go", "Run"}}, nil},
			{"a file ends the list", "`a.go: Run`, `b.go`, `Nope`", []docRef{{1, "a.go", "Run"}}, nil},
			{"malformed", "`a.go: Run()` and `a.go: Box.Open.x`", []docRef{{1, "a.go: Run()", ""}, {1, "a.go: Box.Open.x", ""}},
				[]string{"G.md:1: `a.go: Run()` is not a `file.go: Name` reference", "G.md:1: `a.go: Box.Open.x` is not a `file.go: Name` reference"}},
			{"package, not file", "`internal/homecontrol: Paths`", nil, nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				refs := docRefs(tc.text)
				if !slices.Equal(refs, tc.refs) {
					t.Fatalf("docRefs(%q) = %v; want %v", tc.text, refs, tc.refs)
				}
				if stale := staleRefs(root, "G.md", refs); !slices.Equal(stale, tc.stale) {
					t.Fatalf("staleRefs = %q; want %q", stale, tc.stale)
				}
			})
		}
	})

	root := moduleRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "GUARANTEES.md"))
	if err != nil {
		t.Fatal(err)
	}
	refs := docRefs(string(doc))
	// A pattern that stopped matching would pass everything.
	if len(refs) < 150 {
		t.Fatalf("GUARANTEES.md: found only %d `file.go: Name` references; is the extraction broken?", len(refs))
	}
	if stale := staleRefs(root, "GUARANTEES.md", refs); len(stale) > 0 {
		t.Fatalf("%d of GUARANTEES.md's %d `file.go: Name` references are stale (moved or renamed? update the document):\n%s",
			len(stale), len(refs), strings.Join(stale, "\n"))
	}
	t.Logf("GUARANTEES.md: %d `file.go: Name` references, all declared", len(refs))
}
