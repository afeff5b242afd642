package cli

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCLIImportsOnlyTheFrontOfTheLibrary: the CLI (every file, tests and
// every OS's included) imports of this module only package moat and its
// policy front end, never a backend or other internals: doctor asks moat,
// and policy finishes the Config.
func TestCLIImportsOnlyTheFrontOfTheLibrary(t *testing.T) {
	const module = "github.com/moat-sandbox/moat"
	allowed := map[string]bool{module: true, module + "/policy": true}
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files here: %v", err)
	}
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if (path == module || strings.HasPrefix(path, module+"/")) && !allowed[path] {
				t.Errorf("%s imports %s; the CLI may use only %s and %s/policy", name, path, module, module)
			}
		}
	}
}
