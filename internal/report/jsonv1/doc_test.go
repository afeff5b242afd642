package jsonv1

import (
	"os"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/report/jsonv1/schematest"
	"github.com/moat-sandbox/moat/internal/settings"
)

// docsPage reads docs/report-json.md.
func docsPage(t *testing.T) string {
	t.Helper()
	path, err := schematest.ModuleFile("docs/report-json.md")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The page's example document conforms to the schema and parses.
func TestDocsExampleConforms(t *testing.T) {
	page := docsPage(t)
	_, rest, ok := strings.Cut(page, "```json\n")
	example, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/report-json.md has no json example")
	}
	if err := schematest.Validate([]byte(example)); err != nil {
		t.Errorf("the example does not conform: %v", err)
	}
	if _, err := Parse([]byte(example)); err != nil {
		t.Errorf("the example does not parse: %v", err)
	}
}

// The page lists every setting id with its flag and Config field.
func TestDocsListEverySetting(t *testing.T) {
	page := docsPage(t)
	for _, s := range settings.All() {
		row := "| `" + s.ID + "` | `" + s.Flag
		i := strings.Index(page, row)
		if i < 0 {
			t.Errorf("docs/report-json.md lists no row %q", row)
			continue
		}
		line, _, _ := strings.Cut(page[i:], "\n")
		if !strings.Contains(line, "`"+s.Field+"`") {
			t.Errorf("docs/report-json.md row %q does not name %s", line, s.Field)
		}
	}
}
