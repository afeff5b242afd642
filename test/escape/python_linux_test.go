//go:build linux

package escape_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/moattest"
)

// The venv of Config.Python is read and execute only in the sandbox
// (G2): code cannot add a file to its site-packages (a .pth runs at every
// start of that interpreter, on the host too), replace, remove or rename
// one of its modules, repoint bin/python, rewrite pyvenv.cfg, or pip
// install into it; build mode does not change that. The positive control
// runs the same probes with AllowPipInstall, where site-packages and bin/
// are writable and pip installs, and pyvenv.cfg still is not.

const (
	victimPkg   = "moat_esc_victim"
	victimCode  = "SAFE = True\n"
	intruderPkg = "moat_esc_intruder"
)

// escWheel writes a wheel of pkg whose module holds code into dir.
func escWheel(t *testing.T, dir, pkg, code string) {
	t.Helper()
	whl, err := moattest.Wheel(pkg, "1.0", "moat escape probe", moattest.WheelFile{Name: pkg + "/__init__.py", Content: code})
	if err != nil {
		t.Fatal(err)
	}
	if err := moattest.WriteFile(filepath.Join(dir, pkg+"-1.0-py3-none-any.whl"), whl, 0o644); err != nil {
		t.Fatal(err)
	}
}

// venvProbes each try to change the venv; they print "changed" when the
// change happened. SP is site-packages, V the venv, W the wheel directory.
var venvProbes = []struct {
	name, code string
	pip        bool // writable with AllowPipInstall
}{
	{"add a .pth to site-packages", "open(SP + '/moat_evil.pth', 'w').write('import os\\n'); print('changed')", true},
	{"overwrite a module", "open(SP + '/" + victimPkg + "/__init__.py', 'w').write('SAFE = False\\n'); print('changed')", true},
	{"rename a file over a module", "open(SP + '/x.py', 'w').write('SAFE = False\\n'); os.replace(SP + '/x.py', SP + '/" + victimPkg + "/__init__.py'); print('changed')", true},
	{"remove a module", "os.remove(SP + '/" + victimPkg + "/__init__.py'); print('changed')", true},
	{"write bytecode beside a module", "os.makedirs(SP + '/" + victimPkg + "/__pycache__', exist_ok=True); open(SP + '/" + victimPkg + "/__pycache__/moat_probe.pyc', 'wb').write(b'x'); print('changed')", true},
	{"repoint bin/python", "os.remove(V + '/bin/python'); os.symlink('/bin/sh', V + '/bin/python'); print('changed')", true},
	{"pip install into the venv", "import subprocess, sys; r = subprocess.run([sys.executable, '-m', 'pip', 'install', '--no-index', '--find-links', W, '" + intruderPkg + "'], capture_output=True, text=True); print('changed' if r.returncode == 0 else r.stderr[-300:])", true},
	{"rewrite pyvenv.cfg", "open(V + '/pyvenv.cfg', 'a').write('include-system-site-packages = true\\n'); print('changed')", false},
	{"add a file at the venv's top", "open(V + '/sitecustomize.py', 'w').write('x'); print('changed')", false},
}

func TestPythonVenvReadOnly(t *testing.T) {
	need(t, "/usr/bin/python3", "cp")
	tpl := venvTemplate(t)
	for _, allowPip := range []bool{false, true} {
		for _, lv := range buildModeLevels {
			for _, build := range []bool{false, true} {
				name := lv.name
				if build {
					name += "-build"
				}
				if allowPip {
					name += "-allow-pip-install"
				}
				t.Run(name, func(t *testing.T) {
					for _, p := range venvProbes {
						t.Run(p.name, func(t *testing.T) {
							runVenvProbe(t, tpl, lv.iso, build, allowPip, p.code, allowPip && p.pip)
						})
					}
				})
			}
		}
	}
}

// venvTemplate builds, once, the venv every probe starts from: pip and
// the victim package, offline.
type template struct{ venv, wheels string }

func venvTemplate(t *testing.T) template {
	t.Helper()
	wheels := t.TempDir()
	os.Chmod(wheels, 0o755)
	escWheel(t, wheels, victimPkg, victimCode)
	escWheel(t, wheels, intruderPkg, "INTRUDED = True\n")
	v, err := (&moat.VenvManager{CacheDir: t.TempDir()}).Create(context.Background(), moat.VenvConfig{
		Path: filepath.Join(t.TempDir(), "venv"), Python: "/usr/bin/python3", Backend: moat.VenvPython,
		Packages: []string{victimPkg}, FindLinks: []string{wheels}, NoIndex: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return template{venv: v.Path, wheels: wheels}
}

// runVenvProbe copies the template venv (every probe changes or breaks
// one; python -m pip and the modules do not depend on the venv's place),
// runs code against it in a sandbox, and checks on the host whether it
// changed.
func runVenvProbe(t *testing.T, tpl template, iso moat.Isolation, build, allowPip bool, code string, wantChanged bool) {
	t.Helper()
	wheels := tpl.wheels
	path := filepath.Join(t.TempDir(), "venv")
	if out, err := exec.Command("cp", "-a", tpl.venv, path).CombinedOutput(); err != nil {
		t.Fatalf("copying the venv: %v %s", err, out)
	}
	// The copy is used as it is: its manifest, kept outside the venv, is
	// the template's, and New needs none.
	v := struct{ Path string }{path}
	sps, _ := filepath.Glob(filepath.Join(v.Path, "lib", "python3*", "site-packages"))
	if len(sps) != 1 {
		t.Fatalf("site-packages: %v", sps)
	}
	sp := sps[0]
	pyvenv, _ := os.ReadFile(filepath.Join(v.Path, "pyvenv.cfg"))
	sb := newSandbox(t, moat.Config{
		Isolation: iso,
		Build:     build,
		Grants:    []moat.Grant{{Path: wheels, Access: moat.READ}},
		Env:       moat.Env{Set: []string{"PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_INPUT=1"}},
		Python:    &moat.PythonConfig{Venv: v.Path, AllowPipInstall: allowPip},
	})
	prog := "import os\nSP, V, W = " + pyStr(sp) + ", " + pyStr(v.Path) + ", " + pyStr(wheels) + "\n" + code + "\n"
	r, _ := sb.RunPython(context.Background(), prog)
	said := strings.TrimSpace(string(r.Stdout)) + " " + string(r.Stderr)

	// What the host finds afterwards decides, not what the probe said.
	victim, _ := os.ReadFile(filepath.Join(sp, victimPkg, "__init__.py"))
	link, _ := os.Readlink(filepath.Join(v.Path, "bin", "python"))
	pyvenvAfter, _ := os.ReadFile(filepath.Join(v.Path, "pyvenv.cfg"))
	_, pthErr := os.Lstat(filepath.Join(sp, "moat_evil.pth"))
	_, intrErr := os.Lstat(filepath.Join(sp, intruderPkg))
	_, pycErr := os.Lstat(filepath.Join(sp, victimPkg, "__pycache__", "moat_probe.pyc"))
	_, topErr := os.Lstat(filepath.Join(v.Path, "sitecustomize.py"))
	changed := string(victim) != victimCode || link == "/bin/sh" || string(pyvenvAfter) != string(pyvenv) ||
		pthErr == nil || intrErr == nil || pycErr == nil || topErr == nil
	if changed != wantChanged {
		t.Fatalf("venv changed=%v, want %v; the probe said: %s", changed, wantChanged, said)
	}
	if changed != strings.HasPrefix(said, "changed") {
		t.Fatalf("the probe and the host disagree (host: changed=%v): %s", changed, said)
	}
	if wantChanged && strings.Contains(code, intruderPkg) {
		// What pip installed in the sandbox imports in the next command.
		r, err := sb.RunPython(context.Background(), "import "+intruderPkg+" as m; print(m.INTRUDED)")
		if err != nil || strings.TrimSpace(string(r.Stdout)) != "True" {
			t.Fatalf("the installed package: %v %s", err, r.Stderr)
		}
	}
}

// sitePackages is the one site-packages directory of the venv at v.
func sitePackages(t *testing.T, v string) string {
	t.Helper()
	sps, _ := filepath.Glob(filepath.Join(v, "lib", "python3*", "site-packages"))
	if len(sps) != 1 {
		t.Fatalf("site-packages of %s: %v", v, sps)
	}
	return sps[0]
}

// pyStr quotes s as a Python string literal.
func pyStr(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// A writable grant over the venv would make it writable whatever
// Config.Python says, and a venv in the working directory is writable by
// definition: New refuses both rather than run with a venv that is not
// what it claims. With AllowPipInstall the writable grant is consistent
// and allowed (the positive control).
func TestPythonVenvWritableGrantRefused(t *testing.T) {
	need(t, "/usr/bin/python3")
	parent := t.TempDir()
	v, err := (&moat.VenvManager{CacheDir: t.TempDir()}).Create(context.Background(), moat.VenvConfig{Path: filepath.Join(parent, "venv"), Python: "/usr/bin/python3", Backend: moat.VenvPython})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		cfg      moat.Config
		refused  string
		controls bool
	}{
		{"a writable grant of its parent", moat.Config{Grants: []moat.Grant{{Path: parent, Access: moat.WRITE}}, Python: &moat.PythonConfig{Venv: v.Path}}, "overlaps the writable grant", false},
		{"an rwx grant of the venv", moat.Config{Grants: []moat.Grant{{Path: v.Path, Access: moat.WRITE | moat.EXEC}}, Python: &moat.PythonConfig{Venv: v.Path}}, "overlaps the writable grant", false},
		{"a writable grant inside it", moat.Config{Grants: []moat.Grant{{Path: sitePackages(t, v.Path), Access: moat.WRITE}}, Python: &moat.PythonConfig{Venv: v.Path}}, "overlaps the writable grant", false},
		{"the working directory holding it", moat.Config{WorkDir: parent, Python: &moat.PythonConfig{Venv: v.Path}}, "inside the working directory", false},
		{"the kept home holding it", moat.Config{Home: parent, Python: &moat.PythonConfig{Venv: v.Path}}, "inside the kept home", false},
		{"the permissive level, which writes nearly everywhere", moat.Config{Isolation: moat.IsolationPermissive, Python: &moat.PythonConfig{Venv: v.Path}}, "permissive", false},
		{"control: the permissive level with AllowPipInstall", moat.Config{Isolation: moat.IsolationPermissive, Python: &moat.PythonConfig{Venv: v.Path, AllowPipInstall: true}}, "", true},
		{"control: a writable grant with AllowPipInstall", moat.Config{Grants: []moat.Grant{{Path: parent, Access: moat.WRITE}}, Python: &moat.PythonConfig{Venv: v.Path, AllowPipInstall: true}}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb, err := moat.New(tc.cfg)
			if tc.controls {
				if err != nil {
					t.Fatalf("the control was refused: %v", err)
				}
				defer sb.Close()
				target := filepath.Join(sitePackages(t, v.Path), "moat_control.py")
				r := python(t, sb, "open("+pyStr(target)+", 'w').write('x'); print('wrote')")
				mustContain(t, r, "wrote")
				os.Remove(target)
				return
			}
			if err == nil {
				sb.Close()
				t.Fatal("New accepted a venv the sandbox could write")
			}
			if !strings.Contains(err.Error(), tc.refused) {
				t.Fatalf("got %v, want %q", err, tc.refused)
			}
		})
	}
}
