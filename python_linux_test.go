package moat_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/moattest"
)

// systemPython is the distribution's interpreter, with venv, pip and the
// Debian packages ./test.sh installs.
const systemPython = "/usr/bin/python3"

// localWheels writes a wheel of each package, whose module says its name,
// into a fresh directory.
func localWheels(t *testing.T, pkgs ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, p := range pkgs {
		mod := strings.ReplaceAll(p, "-", "_")
		whl, err := moattest.Wheel(mod, "1.0", "moat test package", moattest.WheelFile{Name: mod + "/__init__.py", Content: "NAME = '" + p + "'\n"})
		if err != nil {
			t.Fatal(err)
		}
		if err := moattest.WriteFile(filepath.Join(dir, mod+"-1.0-py3-none-any.whl"), whl, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// offlineVenv builds a venv with pkgs from local wheels, offline.
func offlineVenv(t *testing.T, m *moat.VenvManager, pkgs ...string) *moat.Venv {
	t.Helper()
	moattest.Need(t, systemPython)
	v, err := m.Create(context.Background(), moat.VenvConfig{
		Path: filepath.Join(t.TempDir(), "venv"), Python: systemPython, Backend: moat.VenvPython,
		Packages: pkgs, FindLinks: []string{localWheels(t, pkgs...)}, NoIndex: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A venv built on the host, with a package from a local wheel, used by
// RunPython and PythonCommand in the sandbox: the package imports, the venv
// is the interpreter's prefix, VIRTUAL_ENV and PATH name it, MPLBACKEND is
// Agg unless the caller sets it.
func TestRunPythonWithVenv(t *testing.T) {
	v := offlineVenv(t, nil, "moat_py_probe")
	for _, tc := range []struct {
		name string
		env  moat.Env
		mpl  string
	}{
		{"default", moat.Env{}, "Agg"},
		{"caller's MPLBACKEND", moat.Env{Set: []string{"MPLBACKEND=svg"}}, "svg"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := moattest.NewSandbox(t, moat.Config{Python: &moat.PythonConfig{Venv: v.Path}, Env: tc.env})
			r, err := sb.RunPython(context.Background(), "import moat_py_probe, os, sys, shutil\nprint(moat_py_probe.NAME, sys.prefix, os.environ['VIRTUAL_ENV'], os.environ['MPLBACKEND'], shutil.which('python'))")
			if err != nil {
				t.Fatalf("RunPython: %v\n%s", err, r.Stderr)
			}
			want := strings.Join([]string{"moat_py_probe", v.Path, v.Path, tc.mpl, v.Path + "/bin/python"}, " ")
			if got := strings.TrimSpace(string(r.Stdout)); got != want || r.ExitCode != 0 {
				t.Fatalf("got %q (exit %d), want %q", got, r.ExitCode, want)
			}
			out, err := sb.PythonCommand("-c", "import sys; print(sys.executable)").Output()
			if err != nil || strings.TrimSpace(string(out)) != v.Path+"/bin/python" {
				t.Fatalf("PythonCommand: %v %q", err, out)
			}
		})
	}
}

// Without a venv, RunPython uses the sandbox's python3; a syntax error
// exits 1 with the error report on stderr, an exception with its
// traceback, and sys.exit's code comes back.
func TestRunPythonErrors(t *testing.T) {
	sb := moattest.NewSandbox(t, moat.Config{Python: &moat.PythonConfig{}})
	for _, tc := range []struct {
		name, code string
		exit       int
		stderr     []string
	}{
		{"syntax error", "def broken(:\n    pass", 1, []string{`File "<string>", line 1`, "SyntaxError"}},
		{"exception", "import json\njson.loads('{')", 1, []string{"Traceback (most recent call last)", "json.decoder.JSONDecodeError"}},
		{"exit code", "import sys; sys.exit(3)", 3, nil},
		{"ok", "print('fine')", 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := sb.RunPython(context.Background(), tc.code)
			var ee *moat.ExitError
			if tc.exit == 0 && err != nil || tc.exit != 0 && !errors.As(err, &ee) {
				t.Fatalf("err %v", err)
			}
			if r.ExitCode != tc.exit {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.ExitCode, tc.exit, r.Stderr)
			}
			for _, w := range tc.stderr {
				if !strings.Contains(string(r.Stderr), w) {
					t.Fatalf("stderr lacks %q:\n%s", w, r.Stderr)
				}
			}
		})
	}
}

// A venv that cannot stay read-only, or is no venv, is refused by New.
func TestPythonVenvRefused(t *testing.T) {
	v := offlineVenv(t, nil)
	work := t.TempDir()
	inWork := filepath.Join(work, "venv")
	if err := os.Rename(v.Path, inWork); err != nil {
		t.Fatal(err)
	}
	notVenv := t.TempDir()
	for _, tc := range []struct {
		name string
		cfg  moat.Config
		want string
	}{
		{"relative path", moat.Config{Python: &moat.PythonConfig{Venv: "venv"}}, "absolute and clean"},
		{"not a venv", moat.Config{Python: &moat.PythonConfig{Venv: notVenv}}, "not a venv"},
		{"inside the working directory", moat.Config{WorkDir: work, Python: &moat.PythonConfig{Venv: inWork}}, "inside the working directory"},
		{"inside the working directory, build mode", moat.Config{WorkDir: work, Build: true, Python: &moat.PythonConfig{Venv: inWork, AllowPipInstall: true}}, "inside the working directory"},
		{"inside a writable grant", moat.Config{Grants: []moat.Grant{{Path: work, Access: moat.WRITE}}, Python: &moat.PythonConfig{Venv: inWork}}, "overlaps the writable grant"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb, err := moat.New(tc.cfg)
			if err == nil {
				sb.Close()
				t.Fatal("New accepted it")
			}
			if !strings.Contains(err.Error(), tc.want) || strings.HasPrefix(err.Error(), "moat: ") {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// The data-science preset: Debian's numpy, pandas and matplotlib through
// system site-packages (scikit-learn is a local stand-in wheel, as the
// index is unreachable), built once in the cache and reused after.
func TestPythonDataSciencePreset(t *testing.T) {
	moattest.Need(t, systemPython)
	m := &moat.VenvManager{CacheDir: t.TempDir()}
	vc := moat.VenvConfig{Python: systemPython, Backend: moat.VenvPython, FindLinks: []string{localWheels(t, "scikit-learn")}, NoIndex: true}
	var phases []string
	m.Progress = func(p moat.VenvProgress) { phases = append(phases, p.Phase) }
	cfg, err := moat.PythonDataScience(context.Background(), m, vc)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Python == nil || cfg.Python.AllowPipInstall || !strings.HasPrefix(cfg.Python.Venv, m.CacheDir) {
		t.Fatalf("preset %+v", cfg.Python)
	}
	phases = nil
	again, err := moat.PythonDataScience(context.Background(), m, vc)
	if err != nil || again.Python.Venv != cfg.Python.Venv || len(phases) != 1 || phases[0] != "reuse" {
		t.Fatalf("second preset: %v %+v phases %v", err, again.Python, phases)
	}
	dev, err := moat.PythonDev(context.Background(), m, vc)
	if err != nil || !dev.Python.AllowPipInstall || dev.Python.Venv == cfg.Python.Venv {
		t.Fatalf("PythonDev must not share the read-only cached venv: %v %+v", err, dev.Python)
	}
	sb := moattest.NewSandbox(t, cfg)
	r, err := sb.RunPython(context.Background(), "import numpy, pandas, matplotlib, scikit_learn, matplotlib.pyplot\nprint(matplotlib.get_backend(), scikit_learn.NAME)")
	if err != nil || strings.TrimSpace(string(r.Stdout)) != "agg scikit-learn" {
		t.Fatalf("%v\n%s%s", err, r.Stdout, r.Stderr)
	}
}

// Creates of one cached venv at once take turns: one builds it, the
// others reuse it.
func TestVenvCacheConcurrentCreate(t *testing.T) {
	moattest.Need(t, systemPython)
	m := &moat.VenvManager{CacheDir: t.TempDir()}
	const n = 3
	type res struct {
		v   *moat.Venv
		err error
	}
	out := make(chan res, n)
	for i := 0; i < n; i++ {
		go func() {
			v, err := m.Create(context.Background(), moat.VenvConfig{Python: systemPython, Backend: moat.VenvPython})
			out <- res{v, err}
		}()
	}
	reused := 0
	for i := 0; i < n; i++ {
		r := <-out
		if r.err != nil {
			t.Fatal(r.err)
		}
		if r.v.Reused {
			reused++
		}
	}
	if reused != n-1 {
		t.Fatalf("%d of %d Creates reused the venv, want %d", reused, n, n-1)
	}
}

// With AllowPipInstall the code may repoint the venv's bin/python (bin/ is
// writable); the next sandbox must not open the directory it now points
// at: the interpreter's installation that moat grants comes from
// pyvenv.cfg, which stays read-only. The control grants that directory
// explicitly, and the same probe reads it.
func TestPythonVenvRepointedLinkOpensNothing(t *testing.T) {
	v := offlineVenv(t, &moat.VenvManager{CacheDir: t.TempDir()})
	fake := t.TempDir()
	for _, d := range []string{"bin", "lib/python3.11"} {
		os.MkdirAll(filepath.Join(fake, d), 0o755)
	}
	data, err := os.ReadFile("/usr/bin/python3.11")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(fake, "bin", "python3"), data, 0o755)
	os.WriteFile(filepath.Join(fake, "lib", "python3.11", "os.py"), nil, 0o644)
	os.WriteFile(filepath.Join(fake, "secret.txt"), []byte("s3cret"), 0o644)
	link := filepath.Join(v.Path, "bin", "python")
	os.Remove(link)
	if err := os.Symlink(filepath.Join(fake, "bin", "python3"), link); err != nil {
		t.Fatal(err)
	}
	probe := "open(" + strconv.Quote(filepath.Join(fake, "secret.txt")) + ").read()"
	for _, tc := range []struct {
		name  string
		grant bool
	}{{"the repointed link", false}, {"control: an explicit grant", true}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := moat.Config{Python: &moat.PythonConfig{Venv: v.Path}}
			if tc.grant {
				cfg.Grants = []moat.Grant{{Path: fake, Access: moat.READ}}
			}
			sb := moattest.NewSandbox(t, cfg)
			out, err := sb.Command("/usr/bin/python3", "-c", probe).CombinedOutput()
			if (err == nil) != tc.grant {
				t.Fatalf("reading the directory the link points at: err=%v %s", err, out)
			}
		})
	}
}
