//go:build linux

package workloads_test

import (
	"github.com/moat-sandbox/moat/internal/moattest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	wheelPackage = "moat_wl_probe"
	wheelVersion = "1.0"
)

// buildWheel returns a minimal pure-Python wheel of wheelPackage, with a
// console script, built here so that pip installs it offline.
func buildWheel(t *testing.T) []byte {
	t.Helper()
	whl, err := moattest.Wheel(wheelPackage, wheelVersion, "moat workloads probe",
		moattest.WheelFile{Name: wheelPackage + "/__init__.py", Content: "MOAT = 'wheel-installed'\n\ndef main():\n    print('console-script-ran')\n"},
		moattest.WheelFile{Name: moattest.DistInfo(wheelPackage, wheelVersion) + "entry_points.txt", Content: "[console_scripts]\nmoat-wl-probe = " + wheelPackage + ":main\n"})
	if err != nil {
		t.Fatal(err)
	}
	return whl
}

// python3 is Debian's interpreter, which has the venv module.
const python3 = "/usr/bin/python3"

// A venv in the working directory with a wheel the test built, installed
// by the venv's pip offline. The venv's pip is a script written in the
// sandbox, so only build mode runs it; the venv's python is a link to the
// system interpreter, so `python -m pip` works in both.
func TestPythonVenv(t *testing.T) {
	need(t, python3)
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			dir := t.TempDir()
			wheels := filepath.Join(dir, "wheels")
			os.Mkdir(wheels, 0o755)
			if err := moattest.WriteFile(filepath.Join(wheels, wheelPackage+"-"+wheelVersion+"-py3-none-any.whl"), buildWheel(t), 0o644); err != nil {
				t.Fatal(err)
			}
			sb := newSandbox(t, config(dir, m.build))
			mustPass(t, "python3 -m venv", run(t, sb, "", python3, "-m", "venv", ".venv"))
			pip := []string{"install", "--no-index", "--find-links", "wheels", wheelPackage}

			r := run(t, sb, "", append([]string{".venv/bin/pip"}, pip...)...)
			if m.build {
				mustPass(t, ".venv/bin/pip install", r)
				r = run(t, sb, "", ".venv/bin/moat-wl-probe")
				if !r.ok() || strings.TrimSpace(r.Out) != "console-script-ran" {
					t.Fatalf("the installed console script did not run in build mode: %s", r)
				}
			} else {
				if r.Code != -1 || !hasExecRefusal(sb) {
					t.Fatalf(".venv/bin/pip should be refused before it starts, with an exec refusal naming --build: %s\nrefusals: %v", r, sb.Refusals())
				}
				wxRefused(t, "a shell running .venv/bin/pip", sh(t, sb, ".venv/bin/pip --version"))
				mustPass(t, ".venv/bin/python -m pip install", run(t, sb, "", append([]string{".venv/bin/python", "-m", "pip"}, pip...)...))
			}
			r = run(t, sb, "", ".venv/bin/python", "-c", "import "+wheelPackage+" as p, sys; print(p.MOAT, sys.prefix == sys.base_prefix)")
			if !r.ok() || strings.TrimSpace(r.Out) != "wheel-installed False" {
				t.Fatalf("the wheel is not importable from the venv: %s", r)
			}
		})
	}
}

// tempProgram writes /tmp/out.txt and reads it back, then uses tempfile,
// and says where temp files went.
const tempProgram = `
import os, tempfile
with open("/tmp/out.txt", "w") as f:
    f.write("plot data\n")
print("read:", open("/tmp/out.txt").read().strip())
with tempfile.NamedTemporaryFile("w+", suffix=".csv") as f:
    f.write("a,b\n"); f.flush(); f.seek(0)
    print("tempfile:", f.read().strip())
d = tempfile.mkdtemp()
open(os.path.join(d, "x"), "w").write("y")
print("gettempdir:", tempfile.gettempdir())
print("in workdir:", os.path.realpath(tempfile.gettempdir()).startswith(os.getcwd()))
`

// Model-written code writes /tmp directly and through tempfile: both work,
// in the sandbox's private temp, never the working directory, and never
// reach the host's /tmp.
func TestPythonTemp(t *testing.T) {
	need(t, python3)
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			if _, err := os.Lstat("/tmp/out.txt"); err == nil {
				t.Fatalf("/tmp/out.txt already exists on the host; remove it so the test can tell whether the sandbox wrote there")
			}
			dir := t.TempDir()
			sb := newSandbox(t, config(dir, m.build))
			r := run(t, sb, "", python3, "-c", tempProgram)
			mustPass(t, "the temp program", r)
			for _, want := range []string{"read: plot data", "tempfile: a,b", "in workdir: False"} {
				if !strings.Contains(r.Out, want) {
					t.Fatalf("output lacks %q: %s", want, r)
				}
			}
			if _, err := os.Lstat("/tmp/out.txt"); err == nil {
				os.Remove("/tmp/out.txt")
				t.Fatalf("the sandbox's /tmp/out.txt landed in the host's /tmp")
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Fatalf("temp files landed in the working directory: %v", entries)
			}
		})
	}
}
