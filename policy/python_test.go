package policy

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

func TestPythonTable(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		name string
		doc  string
		want Python
		err  string
	}{
		{name: "every key", doc: "[python]\nvenv = \"v\"\npackages = [\"numpy\", \" pandas>=2 \"]\npython = \"/usr/bin/python3\"\nsystem-site-packages = false\nvenv-backend = \"python\"\nfind-links = [\"wheels\", \"https://x/links\"]\nno-index = true\nallow-pip-install = true\n",
			want: Python{Venv: "/cfg/v", Packages: []string{"numpy", "pandas>=2"}, Interpreter: "/usr/bin/python3", SystemSitePackages: &no, VenvBackend: "python", FindLinks: []string{"/cfg/wheels", "https://x/links"}, NoIndex: &yes, AllowPipInstall: &yes}},
		{name: "heel's interpreter key", doc: "[python]\ninterpreter = \"python3.11\"\nindex-url = \"https://pypi.example/simple\"\n", want: Python{Interpreter: "python3.11", IndexURL: "https://pypi.example/simple"}},
		{name: "both interpreter keys", doc: "[python]\npython = \"a\"\ninterpreter = \"b\"\n", err: "line 3: python.interpreter: given with python.python"},
		{name: "a package read as an option", doc: "[python]\npackages = [\"--index-url=http://evil\"]\n", err: "line 2: python.packages \"--index-url=http://evil\": starts with '-'"},
		{name: "a bad backend", doc: "[python]\nvenv-backend = \"conda\"\n", err: "line 2: python.venv-backend \"conda\": want auto, uv or python"},
		{name: "a bad index", doc: "[python]\nindex-url = \"ftp://x\"\n", err: "line 2: python.index-url \"ftp://x\""},
		{name: "a find-links option", doc: "[python]\nfind-links = [\"-f\"]\n", err: "want a directory or a URL"},
		{name: "a switch not a bool", doc: "[python]\nallow-pip-install = \"yes\"\n", err: "line 2: python.allow-pip-install: want true or false, not a string"},
		{name: "an unknown key", doc: "[python]\nvenvv = \"x\"\n", err: "line 2: unknown key \"python.venvv\""},
		{name: "an interpreter read as an option", doc: "[python]\npython = \"-c\"\n", err: "want an interpreter's name or path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse("/cfg/moat.toml", []byte(tc.doc))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := f.Python
			if got.Venv != tc.want.Venv || !slices.Equal(got.Packages, tc.want.Packages) || got.Interpreter != tc.want.Interpreter ||
				got.VenvBackend != tc.want.VenvBackend || got.IndexURL != tc.want.IndexURL || !slices.Equal(got.FindLinks, tc.want.FindLinks) ||
				!sameBool(got.SystemSitePackages, tc.want.SystemSitePackages) || !sameBool(got.NoIndex, tc.want.NoIndex) || !sameBool(got.AllowPipInstall, tc.want.AllowPipInstall) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func sameBool(a, b *bool) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// The command line beats the file's scalars and adds to its lists; an
// index URL with no index is refused, naming both; the venv config has
// heel's defaults.
func TestPythonMerge(t *testing.T) {
	yes, no := true, false
	file, err := Parse("/cfg/moat.toml", []byte("[python]\npackages = [\"a\"]\nsystem-site-packages = false\nindex-url = \"https://x/simple\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Merge(file.Layer, Layer{Python: Python{Packages: []string{"b"}, SystemSitePackages: &yes, AllowPipInstall: &yes}})
	if err != nil {
		t.Fatal(err)
	}
	v, err := r.Python.VenvConfig()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(v.Packages, []string{"a", "b"}) || !v.SystemSitePackages || v.IndexURL != "https://x/simple" || !v.Mutable || !r.Python.AllowPip() {
		t.Fatalf("merged %+v", v)
	}
	_, err = Merge(file.Layer, Layer{Source: testFlags{}, Python: Python{NoIndex: &yes}})
	if err == nil || !strings.Contains(err.Error(), `config "/cfg/moat.toml": line 4: python.index-url "https://x/simple": given with --no-index`) {
		t.Fatalf("index URL with --no-index: %v", err)
	}
	d, err := Python{}.VenvConfig()
	if err != nil || !d.SystemSitePackages || d.Backend != moat.VenvAuto || d.Path != "" || d.Mutable {
		t.Fatalf("defaults %+v %v", d, err)
	}
	off, _ := Python{SystemSitePackages: &no}.VenvConfig()
	if off.SystemSitePackages {
		t.Fatal("system-site-packages = false ignored")
	}
}

// testFlags spells keys as flags, like the CLI's source.
type testFlags struct{}

func (testFlags) Key(key string) string {
	if i := strings.LastIndexByte(key, '.'); i >= 0 {
		key = key[i+1:]
	}
	return "--" + key
}
func (testFlags) At(string) string { return "" }

// FuzzPythonTable: no [python] table makes Parse panic; every rejection
// is a one-line *Error; what is accepted has an absolute venv and find
// links that are absolute or URLs, and packages and links that no tool
// would read as an option.
func FuzzPythonTable(f *testing.F) {
	for _, s := range []string{
		"venv = \"v\"\npackages = [\"numpy\"]\n",
		"python = \"/usr/bin/python3\"\nsystem-site-packages = true\nvenv-backend = \"uv\"\n",
		"find-links = [\"w\", \"file:///w\"]\nno-index = true\nindex-url = \"https://a/b\"\n",
		"packages = [\"-e .\"]\n",
		"allow-pip-install = 1\n",
		"interpreter = \"\"\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		const name = "/cfg/moat.toml"
		file, err := Parse(name, []byte("[python]\n"+body))
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || pe.File != name || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q is not a one-line *Error", err)
			}
			return
		}
		p := file.Python
		if p.Venv != "" && !filepath.IsAbs(p.Venv) {
			t.Fatalf("venv %q", p.Venv)
		}
		for _, l := range p.FindLinks {
			if strings.HasPrefix(l, "-") || (!isURL(l) && !filepath.IsAbs(l)) {
				t.Fatalf("find-links %q", l)
			}
		}
		for _, pkg := range p.Packages {
			if again, err := ParsePackage(pkg); err != nil || again != pkg {
				t.Fatalf("package %q not normalized", pkg)
			}
		}
		if strings.HasPrefix(p.Interpreter, "-") {
			t.Fatalf("interpreter %q", p.Interpreter)
		}
		if _, err := Merge(file.Layer); err == nil {
			if _, err := file.Python.VenvConfig(); err != nil {
				t.Fatalf("VenvConfig: %v", err)
			}
		}
	})
}
