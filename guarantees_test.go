package moat_test

import (
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
