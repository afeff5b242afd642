package moat

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat/internal/limitkill"
	"github.com/moat-sandbox/moat/internal/proxy"
	"github.com/moat-sandbox/moat/internal/refusal"
	"github.com/moat-sandbox/moat/internal/settings"
)

// Every refusal that names what allows it does so through a settings id,
// and the words are the table's: built by each constructor, the Allow
// text, the Setting and the table agree.
func TestRefusalSettingsAgree(t *testing.T) {
	cases := []struct {
		name        string
		r           Refusal
		wantSetting string
		wantValue   string
	}{
		{"dns, no network", refusal.DNS(true, "pypi.org"), "network.allow-domain", "pypi.org"},
		{"network, not listed", refusal.Network("allow-list", proxy.Record{Host: "pypi.org", Port: 443, Reason: "not on the allow list"}, "pypi.org:443"), "network.allow-domain", "pypi.org"},
		{"network, local", refusal.Network("allow-all", proxy.Record{Host: "db", Port: 5432, IP: "10.1.2.3", Reason: "private"}, "db:5432"), "network.allow-local", "10.1.2.3"},
		{"memory", limitRefusal(limitkill.Memory(64<<20, "")), "limits.memory", ""},
		{"memory, unmeasured", limitRefusal(limitkill.Memory(64<<20, "unmeasured: x")), "limits.memory", "unlimited"},
		{"disk", limitRefusal(limitkill.Disk(1<<20, 2<<20)), "limits.disk", ""},
		{"disk budget", limitRefusal(limitkill.DiskBudget(1 << 20)), "limits.disk", ""},
		{"disk at exit", limitRefusal(limitkill.Disk(1<<20, 2<<20).AtExit()), "limits.disk", ""},
		{"disk unmeasured", limitRefusal(limitkill.DiskUnmeasured(errors.New("gone"))), "limits.disk", "unlimited"},
		{"inodes", limitRefusal(limitkill.Inodes(10, 20)), "limits.disk-inodes", ""},
		{"cpu", limitRefusal(limitkill.CPU(2)), "limits.cpu-time", ""},
		{"file size", limitRefusal(limitkill.FileSize(1024)), "limits.file-size", ""},
		{"timeout", limitRefusal(limitkill.Timeout(time.Second)), "limits.timeout", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.r.Setting != tc.wantSetting || tc.r.Value != tc.wantValue {
				t.Fatalf("setting %q value %q, want %q %q", tc.r.Setting, tc.r.Value, tc.wantSetting, tc.wantValue)
			}
			s, ok := settings.Lookup(tc.r.Setting)
			if !ok {
				t.Fatalf("setting %q is not in the settings table", tc.r.Setting)
			}
			if want := settings.Allow(tc.r.Setting, tc.r.Value); tc.r.Allow != want || !strings.Contains(tc.r.Allow, s.Flag) {
				t.Errorf("Allow %q, want %q (flag %s)", tc.r.Allow, want, s.Flag)
			}
			if !strings.HasSuffix(tc.r.String(), "("+tc.r.Allow+")") {
				t.Errorf("String() %q does not end with the Allow words", tc.r.String())
			}
		})
	}
	// Recording a refusal words Allow from its Setting, whatever a site set.
	var rs refusal.List
	rs.Add(Refusal{Kind: "exec", Subject: "x", Setting: "build", Allow: "stale words"})
	if got := rs.Snapshot()[0].Allow; got != "--build, Config.Build" {
		t.Errorf("recorded Allow %q, want the table's", got)
	}
}

// refusalSiteDirs are the directories, from the module's root, whose
// files build refusals: the root package and the internal packages it
// moved refusal sites to (internal/limitkill words the limit kills).
var refusalSiteDirs = []string{".", "internal/refusal", "internal/buildmode", "internal/prestart", "internal/limitkill"}

// A source scan of the package and refusalSiteDirs: no refusal is built with Allow words of its
// own (they come from Setting), and every Setting or limit kill (limitkill.Kill)
// a site names is in the settings table. A new refusal site that hard-codes a flag in
// words fails here.
func TestRefusalSitesUseSettings(t *testing.T) {
	// The package's own directory, also when the test binary runs
	// elsewhere (as another user).
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller information")
	}
	root := filepath.Dir(self)
	var files []string
	for _, dir := range refusalSiteDirs {
		got, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, got...)
	}
	fset := token.NewFileSet()
	sites, limitSites := 0, 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, name)
		n, l := scanRefusalSites(fset, f, filepath.ToSlash(rel), func(p string) { t.Error(p) })
		sites, limitSites = sites+n, limitSites+l
	}
	// Control: the scan saw the sites it is about.
	if sites < 10 || limitSites < 8 {
		t.Fatalf("scan found %d Refusal and %d limitKill literals; the scan is broken", sites, limitSites)
	}
}

// The scan finds what it is for: planted sites that word Allow themselves
// or name an id not in the table are reported; a good one is not.
func TestRefusalSitesScanControl(t *testing.T) {
	cases := []struct {
		name, src string
		problems  int
	}{
		{"good", `r := Refusal{Kind: "x", Setting: "build"}; r.Setting, r.Value = "network.allow-local", "10.0.0.1"`, 0},
		{"Allow in a literal", `_ = Refusal{Kind: "x", Allow: "--build"}`, 1},
		{"Allow assigned", `var r Refusal; r.Allow = "--build"`, 1},
		{"unknown id", `_ = Refusal{Kind: "x", Setting: "no.such"}`, 1},
		{"unknown id assigned", `var r Refusal; r.Setting = "no.such"`, 1},
		{"limit kill with words", `_ = Kill{"memory", "d", "--memory SIZE", ""}`, 1},
		{"id from a variable", `id := "build"; _ = Refusal{Setting: id}`, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "planted.go", "package moat\nfunc f() {\n"+tc.src+"\n}\n", 0)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			scanRefusalSites(fset, f, "planted.go", func(p string) { got = append(got, p) })
			if len(got) != tc.problems {
				t.Errorf("problems %q, want %d", got, tc.problems)
			}
		})
	}
}

// scanRefusalSites reports, through problem, each Refusal or limitKill
// literal in f that words Allow itself or names a Setting not in the table,
// and each assignment to .Allow outside internal/refusal/refusal.go; it returns how many
// Refusal and limitKill literals it saw.
func scanRefusalSites(fset *token.FileSet, f *ast.File, name string, problem func(string)) (sites, limitSites int) {
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CompositeLit:
			var typeName string
			switch t := n.Type.(type) {
			case *ast.Ident:
				typeName = t.Name
			case *ast.SelectorExpr:
				typeName = t.Sel.Name // refusal.Refusal
			default:
				return true
			}
			switch typeName {
			case "Refusal":
				sites++
				for _, e := range n.Elts {
					kv, ok := e.(*ast.KeyValueExpr)
					if !ok {
						problem(fmt.Sprintf("%s: Refusal literal without field names", fset.Position(n.Pos())))
						continue
					}
					switch kv.Key.(*ast.Ident).Name {
					case "Allow":
						problem(fmt.Sprintf("%s: Refusal sets Allow in words; set Setting (internal/settings) instead", fset.Position(kv.Pos())))
					case "Setting":
						checkSettingExpr(fset, kv.Value, problem)
					}
				}
			case "limitKill", "Kill": // internal/limitkill's Kill
				if len(n.Elts) == 0 {
					return true
				}
				limitSites++
				if len(n.Elts) != 4 {
					problem(fmt.Sprintf("%s: limitKill literal with %d fields, want subject, detail, setting, value", fset.Position(n.Pos()), len(n.Elts)))
					return true
				}
				checkSettingExpr(fset, n.Elts[2], problem)
			}
		case *ast.AssignStmt:
			for i, lhs := range n.Lhs {
				sel, ok := lhs.(*ast.SelectorExpr)
				if !ok {
					continue
				}
				if sel.Sel.Name == "Allow" && name != "internal/refusal/refusal.go" {
					problem(fmt.Sprintf("%s: assigns .Allow; set Setting instead", fset.Position(n.Pos())))
				}
				if sel.Sel.Name == "Setting" && len(n.Rhs) == len(n.Lhs) {
					checkSettingExpr(fset, n.Rhs[i], problem)
				}
			}
		}
		return true
	})
	return sites, limitSites
}

// checkSettingExpr fails unless e is a settings id in the table: a string
// literal, or internal/buildmode's buildSetting (or limitkill.Kill's own field, whose literals are
// checked).
func checkSettingExpr(fset *token.FileSet, e ast.Expr, problem func(string)) {
	var id string
	switch e := e.(type) {
	case *ast.BasicLit:
		id, _ = strconv.Unquote(e.Value)
	case *ast.Ident:
		switch e.Name {
		case "buildSetting":
			id = "build" // internal/buildmode's, checked there: TestSettingKnown
		default:
			problem(fmt.Sprintf("%s: Setting %s: use a string literal or a known constant, so the scan can check it", fset.Position(e.Pos()), e.Name))
			return
		}
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok && x.Name == "k" && e.Sel.Name == "Setting" {
			return // limitRefusal: the limitkill.Kill literals are checked
		}
		problem(fmt.Sprintf("%s: Setting is not a literal", fset.Position(e.Pos())))
		return
	default:
		problem(fmt.Sprintf("%s: Setting is not a literal", fset.Position(e.Pos())))
		return
	}
	if _, ok := settings.Lookup(id); !ok {
		problem(fmt.Sprintf("%s: Setting %q is not in internal/settings' table", fset.Position(e.Pos()), id))
	}
}
