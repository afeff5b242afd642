package policy

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPolicyImportsNoBackend: policy sits between the front ends and
// moat: it never reaches past moat into a backend or the cgroup code, nor
// back up into the CLI and its flag packages.
func TestPolicyImportsNoBackend(t *testing.T) {
	forbidden := []string{
		"github.com/moat-sandbox/moat/internal/backend",
		"github.com/moat-sandbox/moat/internal/cgroup",
		"github.com/moat-sandbox/moat/internal/cli",
		"github.com/spf13/",
	}
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
			for _, bad := range forbidden {
				if strings.HasPrefix(path, bad) {
					t.Errorf("%s imports %s", name, path)
				}
			}
		}
	}
}
