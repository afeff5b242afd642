package venv_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/moattest"
	"github.com/moat-sandbox/moat/internal/venv"
)

// hostPython is the system interpreter, which has the venv module and pip.
const hostPython = "/usr/bin/python3"

// The uv path is checked by its command lines only: uv is not installed on
// the machines these tests run on.
func TestCommands(t *testing.T) {
	idx := venv.Index{URL: "https://pypi.example/simple", FindLinks: []string{"/w1", "/w2"}}
	for _, tc := range []struct {
		name string
		got  []string
		want []string
	}{
		{"uv venv", venv.CreateCommand("/bin/uv", "/usr/bin/python3.11", "/v", false), []string{"/bin/uv", "venv", "--no-config", "--python", "/usr/bin/python3.11", "--", "/v"}},
		{"uv venv system site", venv.CreateCommand("/bin/uv", "/py", "/v", true), []string{"/bin/uv", "venv", "--no-config", "--python", "/py", "--system-site-packages", "--", "/v"}},
		{"python venv", venv.CreateCommand("", "/py", "/v", false), []string{"/py", "-I", "-m", "venv", "--without-pip", "--", "/v"}},
		{"python venv system site", venv.CreateCommand("", "/py", "/v", true), []string{"/py", "-I", "-m", "venv", "--without-pip", "--system-site-packages", "--", "/v"}},
		{"seed pip", venv.SeedCommand("/v/bin/python"), []string{"/v/bin/python", "-I", "-m", "ensurepip", "--upgrade", "--default-pip"}},
		{"uv pip install", venv.InstallCommand("/bin/uv", "/v/bin/python", idx, []string{"a", "b>=2"}, "/c"),
			[]string{"/bin/uv", "pip", "install", "--no-config", "--python", "/v/bin/python", "--cache-dir", "/c", "--index-url", "https://pypi.example/simple", "--find-links", "/w1", "--find-links", "/w2", "--", "a", "b>=2"}},
		{"pip install offline", venv.InstallCommand("", "/v/bin/python", venv.Index{FindLinks: []string{"/w"}, NoIndex: true}, []string{"a"}, "/c"),
			[]string{"/v/bin/python", "-I", "-m", "pip", "install", "--isolated", "--disable-pip-version-check", "--no-input", "--cache-dir", "/c", "--find-links", "/w", "--no-index", "--", "a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !slices.Equal(tc.got, tc.want) {
				t.Fatalf("got  %q\nwant %q", tc.got, tc.want)
			}
		})
	}
}

// hostInstall is the unit tests' stand-in for moat's install sandbox
// (which internal/venv cannot build without importing moat): it runs the
// job's steps on the host, from /, with the job's environment. The real
// installer is tested in the root package and the escape battery.
func hostInstall(ctx context.Context, job venv.Job) error {
	for _, argv := range job.Steps {
		c := exec.CommandContext(ctx, argv[0], argv[1:]...)
		c.Dir, c.Env = "/", append([]string{"PATH=/usr/bin:/bin"}, job.Env...)
		c.Stdout, c.Stderr = job.Stdout, job.Stderr
		if err := c.Run(); err != nil {
			return err
		}
	}
	return nil
}

// fakeLook finds only the programs it is given.
func fakeLook(found map[string]string) func(string) (string, error) {
	return func(name string) (string, error) {
		if p, ok := found[name]; ok {
			return p, nil
		}
		return "", exec.ErrNotFound
	}
}

func TestCreateRefuses(t *testing.T) {
	dir := t.TempDir()
	mf := filepath.Join(dir, "manifest.json")
	notVenv := filepath.Join(dir, "notvenv")
	os.Mkdir(notVenv, 0o755)
	os.WriteFile(filepath.Join(notVenv, "data.txt"), []byte("x"), 0o644)
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	for _, tc := range []struct {
		name string
		spec venv.Spec
		want string
	}{
		{"no python3 on the host", venv.Spec{Path: filepath.Join(dir, "a"), Manifest: mf, LookPath: fakeLook(nil)}, "python: python3 not found on the host's PATH"},
		{"no such interpreter", venv.Spec{Path: filepath.Join(dir, "a"), Manifest: mf, Python: filepath.Join(dir, "nope")}, "no such file"},
		{"uv asked for, not installed", venv.Spec{Path: filepath.Join(dir, "a"), Manifest: mf, Python: hostPython, Backend: venv.UV, LookPath: fakeLook(nil)}, "uv was asked for"},
		{"path holds something else", venv.Spec{Path: notVenv, Manifest: mf, Python: hostPython}, "not a venv: no pyvenv.cfg"},
		{"path is a file", venv.Spec{Path: file, Manifest: mf, Python: hostPython}, "not a directory"},
		{"package read as an option", venv.Spec{Path: filepath.Join(dir, "a"), Manifest: mf, Packages: []string{"--index-url=http://evil"}}, "pip would read as an option"},
		{"index URL and no index", venv.Spec{Path: filepath.Join(dir, "a"), Manifest: mf, Index: venv.Index{URL: "https://x/simple", NoIndex: true}}, "no-index"},
		{"index URL not http", venv.Spec{Path: filepath.Join(dir, "a"), Manifest: mf, Index: venv.Index{URL: "ftp://x/simple"}}, "want an http, https or file URL"},
		{"no path", venv.Spec{}, "no path"},
		{"no manifest", venv.Spec{Path: filepath.Join(dir, "a")}, "no manifest path"},
		{"no install sandbox", venv.Spec{Path: filepath.Join(dir, "a"), Manifest: mf, Python: hostPython, Backend: venv.Python}, "no install sandbox"},
		{"a requirement without a name", venv.Spec{Path: filepath.Join(dir, "a"), Manifest: mf, Packages: []string{"./x.whl"}}, "names no package"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := venv.Create(context.Background(), tc.spec)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.HasPrefix(err.Error(), "moat: ") {
				t.Fatalf("got %v, want an error containing %q, without the prefix only the command adds", err, tc.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "a")); err == nil {
		t.Fatal("a refused Create left a directory behind")
	}
}

func TestOpenNotAVenv(t *testing.T) {
	dir := t.TempDir()
	if _, err := venv.Open(dir); err == nil || !strings.Contains(err.Error(), "not a venv") {
		t.Fatalf("Open of an empty directory: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "pyvenv.cfg"), []byte("home = /usr/bin\n"), 0o644)
	if _, err := venv.Open(dir); err == nil || !strings.Contains(err.Error(), "bin/python") {
		t.Fatalf("Open of a venv without bin/python: %v", err)
	}
}

// writeWheels writes a wheel of each package into a fresh directory.
func writeWheels(t *testing.T, pkgs ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, p := range pkgs {
		whl, err := moattest.Wheel(p, "1.0", "test package", moattest.WheelFile{Name: p + "/__init__.py", Content: "NAME = " + `"` + p + `"` + "\n"})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p+"-1.0-py3-none-any.whl"), whl, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A venv with a local wheel, offline; a second Create with the same request
// runs nothing (no install event, the manifest untouched); another package
// set installs into the same venv; a package that cannot be found fails
// with pip's message.
func TestCreateInstallsAndReuses(t *testing.T) {
	moattest.Need(t, hostPython)
	wheels := writeWheels(t, "moat_venv_a", "moat_venv_b")
	path := filepath.Join(t.TempDir(), "v")
	state := t.TempDir()
	mf := filepath.Join(state, "v.json")
	var phases []string
	spec := venv.Spec{
		Path: path, Python: hostPython, Backend: venv.Python,
		Manifest: mf, BuildCache: filepath.Join(state, "build"), Install: hostInstall,
		Packages: []string{"moat_venv_a"},
		Index:    venv.Index{FindLinks: []string{wheels}, NoIndex: true},
		Progress: func(e venv.Event) { phases = append(phases, e.Phase) },
	}
	env, err := venv.Create(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if env.Reused || !slices.Contains(phases, "create") || !slices.Contains(phases, "install") {
		t.Fatalf("first Create: reused=%v phases=%v", env.Reused, phases)
	}
	out, err := exec.Command(env.Python, "-c", "import moat_venv_a; print(moat_venv_a.NAME)").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "moat_venv_a" {
		t.Fatalf("the package is not importable: %v %s", err, out)
	}
	if len(env.SitePackages) != 1 || !strings.HasPrefix(env.SitePackages[0], env.Path+"/lib/python") {
		t.Fatalf("site-packages %v", env.SitePackages)
	}
	before, err := os.Stat(mf)
	if err != nil {
		t.Fatal(err)
	}

	phases = nil
	// The wheels are gone and uv would be found: a second Create that did
	// any work would fail or change tools.
	os.RemoveAll(wheels)
	spec.LookPath = fakeLook(map[string]string{"uv": "/nonexistent/uv"})
	spec.Backend = venv.Auto
	spec.Packages = []string{" moat_venv_a ", "moat_venv_a"} // the same set
	env2, err := venv.Create(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if !env2.Reused || !slices.Equal(phases, []string{"reuse"}) {
		t.Fatalf("second Create: reused=%v phases=%v", env2.Reused, phases)
	}
	after, _ := os.Stat(mf)
	if !after.ModTime().Equal(before.ModTime()) {
		t.Fatal("the reuse rewrote the manifest")
	}

	// A package that is nowhere: pip's own message comes back, and the
	// manifest still describes what was built before.
	spec.LookPath, spec.Backend = nil, venv.Python
	spec.Packages = []string{"moat_venv_missing"}
	spec.Index = venv.Index{FindLinks: []string{t.TempDir()}, NoIndex: true}
	_, err = venv.Create(context.Background(), spec)
	if err == nil || !strings.Contains(err.Error(), "moat_venv_missing") || !strings.Contains(err.Error(), "ERROR:") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("a missing package: %v", err)
	}
	m, err := venv.ReadManifest(mf)
	if err != nil || !slices.Equal(m.Packages, []string{"moat_venv_a"}) {
		t.Fatalf("manifest after a failed install: %+v %v", m, err)
	}
	if _, err := os.Lstat(filepath.Join(path, ".moat-venv.json")); err == nil {
		t.Fatal("a manifest was written inside the venv, where the install sandbox writes")
	}
	entries, _ := os.ReadDir(state)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Fatalf("a temporary manifest was left: %s", e.Name())
		}
	}

	// Asking for the other switch is refused, not silently changed.
	spec.Packages, spec.SystemSitePackages = nil, true
	if _, err := venv.Create(context.Background(), spec); err == nil || !strings.Contains(err.Error(), "system site-packages") {
		t.Fatalf("switching system site-packages: %v", err)
	}
}

func TestKeys(t *testing.T) {
	moattest.Need(t, hostPython)
	key := func(s venv.Spec, extra string) string {
		k, err := venv.KeyOf(s, extra)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	a := key(venv.Spec{Python: hostPython, Packages: []string{"b", "a"}}, "")
	if a != key(venv.Spec{Python: hostPython, Packages: []string{"a", "b", "a"}}, "") {
		t.Fatal("the key depends on the order of packages")
	}
	for name, other := range map[string]string{
		"packages":    key(venv.Spec{Python: hostPython, Packages: []string{"a"}}, ""),
		"system site": key(venv.Spec{Python: hostPython, Packages: []string{"a", "b"}, SystemSitePackages: true}, ""),
		"writable":    key(venv.Spec{Python: hostPython, Packages: []string{"a", "b"}}, "+writable"),
	} {
		if other == a {
			t.Fatalf("the key ignores %s", name)
		}
	}
}

func TestCheckPackage(t *testing.T) {
	for _, tc := range []struct {
		p  string
		ok bool
	}{
		{"numpy", true}, {"pandas>=2.0", true}, {"scikit-learn[all]==1.4", true},
		{"", false}, {"  ", false}, {"-e", false}, {"--index-url=x", false}, {"a\nb", false}, {"a\x00", false},
	} {
		if err := venv.CheckPackage(tc.p); (err == nil) != tc.ok {
			t.Errorf("CheckPackage(%q) = %v, want ok=%v", tc.p, err, tc.ok)
		}
	}
}

func TestGist(t *testing.T) {
	got := venv.Gist("Looking in links: /x\nERROR: Could not find a version that satisfies the requirement foo\nERROR: No matching distribution found for foo\n", nil, errors.New("exit status 1"))
	if got != "ERROR: Could not find a version that satisfies the requirement foo; ERROR: No matching distribution found for foo" {
		t.Fatalf("gist %q", got)
	}
	if got := venv.Gist("", nil, errors.New("exit status 2")); got != "exit status 2" {
		t.Fatalf("gist %q", got)
	}
}

// FuzzCheckPackage: an accepted requirement never reads as an option and
// holds no control character.
func FuzzCheckPackage(f *testing.F) {
	for _, s := range []string{"numpy", "-e .", " --x", "a\tb", "pandas>=2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if venv.CheckPackage(s) != nil {
			return
		}
		tr := strings.TrimSpace(s)
		if tr == "" || strings.HasPrefix(tr, "-") || strings.ContainsAny(tr, "\n\r\x00") {
			t.Fatalf("accepted %q", s)
		}
		if set := venv.PackageSet([]string{s}); len(set) != 1 || set[0] != tr {
			t.Fatalf("set of %q: %q", s, set)
		}
	})
}

// FuzzParsePyvenvCfg: no input panics; keys are lower-case and trimmed.
func FuzzParsePyvenvCfg(f *testing.F) {
	f.Add("home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.2\n")
	f.Add("=\n==\nA=b=c")
	f.Fuzz(func(t *testing.T, s string) {
		for k := range venv.ParsePyvenvCfg([]byte(s)) {
			if k == "" || k != strings.ToLower(strings.TrimSpace(k)) {
				t.Fatalf("key %q", k)
			}
		}
	})
}

// FuzzParseManifest: no input panics; what decodes re-encodes to the same
// manifest.
func FuzzParseManifest(f *testing.F) {
	f.Add(`{"format":1,"interpreter":"/usr/bin/python3.11","packages":["a"],"system-site-packages":false}`)
	f.Add(`{"format":1,"x":2}`)
	f.Fuzz(func(t *testing.T, s string) {
		m, err := venv.ParseManifest([]byte(s))
		if err != nil {
			return
		}
		data, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		again, err := venv.ParseManifest(data)
		if err != nil || !again.Equal(m) {
			t.Fatalf("manifest %+v does not survive encoding: %+v %v", m, again, err)
		}
	})
}

// FuzzCheckIndex: an accepted index never starts an argument with "-".
func FuzzCheckIndex(f *testing.F) {
	f.Add("https://x/simple", "/wheels", false)
	f.Add("", "-x", true)
	f.Fuzz(func(t *testing.T, u, l string, no bool) {
		idx := venv.Index{URL: u, FindLinks: []string{l}, NoIndex: no}
		if venv.CheckIndex(idx) != nil {
			return
		}
		if strings.HasPrefix(u, "-") || strings.HasPrefix(l, "-") || l == "" || (u != "" && no) {
			t.Fatalf("accepted %+v", idx)
		}
	})
}

// The uv path end to end with a stand-in uv (uv itself is not installed
// where these tests run): Auto picks it, it gets the venv and install
// command lines, and its error line comes back.
func TestCreateWithUVStandIn(t *testing.T) {
	moattest.Need(t, hostPython)
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	uv := filepath.Join(dir, "uv")
	script := "#!/bin/sh\necho \"$@\" >>" + log + "\nif [ \"$1\" = venv ]; then for a; do p=$a; done; exec " + hostPython + " -m venv --without-pip \"$p\"; fi\n" +
		"case \"$*\" in *moat_uv_fails*) echo 'error: No solution found when resolving dependencies' >&2; exit 1;; esac\nexit 0\n"
	if err := os.WriteFile(uv, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	interp, err := venv.Interpreter(hostPython, exec.LookPath)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "v")
	cache := filepath.Join(dir, "build")
	var jobs []venv.Job
	install := func(ctx context.Context, job venv.Job) error {
		jobs = append(jobs, job)
		return hostInstall(ctx, job)
	}
	spec := venv.Spec{Path: path, Python: hostPython, Packages: []string{"pkg"}, Index: venv.Index{FindLinks: []string{"/w"}, NoIndex: true},
		LookPath: fakeLook(map[string]string{"uv": uv}), Manifest: filepath.Join(dir, "v.json"), BuildCache: cache, Install: install}
	_, err = venv.Create(context.Background(), spec)
	if err == nil || !strings.Contains(err.Error(), "pkg is not installed") {
		t.Fatalf("a stand-in uv that installs nothing must not be recorded: %v", err)
	}
	if _, err := venv.ReadManifest(spec.Manifest); err == nil {
		t.Fatal("a manifest was written for what was not installed")
	}
	got, _ := os.ReadFile(log)
	want := "venv --no-config --python " + interp + " -- " + path + "\n" +
		"pip install --no-config --python " + path + "/bin/python --cache-dir " + cache + " --find-links /w --no-index -- pkg\n"
	if string(got) != want {
		t.Fatalf("uv was run as\n%s\nwant\n%s", got, want)
	}
	if len(jobs) != 1 || len(jobs[0].Steps) != 2 || jobs[0].Steps[0][1] != "-I" || jobs[0].Steps[1][0] != uv ||
		!slices.Equal(jobs[0].Exec, []string{uv}) || jobs[0].Hosts != nil || !slices.Contains(jobs[0].Env, "UV_CACHE_DIR="+cache) {
		t.Fatalf("the install job: %+v", jobs)
	}
	spec.Packages = []string{"moat_uv_fails"}
	if _, err := venv.Create(context.Background(), spec); err == nil || !strings.Contains(err.Error(), "error: No solution found") {
		t.Fatalf("uv's failure: %v", err)
	}
}
