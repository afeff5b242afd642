//go:build linux

package escape_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/venv"
)

// markerPayload is one line of Python that writes the marker file name
// into dir, a host directory no sandbox can see or write: the marker
// exists only if the code ran on the host. Where dir is not there (in a
// sandbox) it does nothing and raises nothing, as a stealthy plant would.
func markerPayload(dir, name string) string {
	return "import os; os.path.isdir(" + pyStr(dir) + ") and open(os.path.join(" + pyStr(dir) + ", " + pyStr(name) + "), 'w').write('ran')"
}

// pyVersionDir is lib/pythonX.Y of the system interpreter.
func pyVersionDir(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("/usr/bin/python3", "-I", "-c", "import sys; print('python%d.%d' % sys.version_info[:2])").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// plantScript is a shell script that writes files (relative name to
// content) in its working directory.
func plantScript(files map[string]string) string {
	var b strings.Builder
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		b.WriteString("mkdir -p '" + filepath.Dir(n) + "' && cat > '" + n + "' <<'MOAT_EOF'\n" + files[n] + "\nMOAT_EOF\n")
	}
	b.WriteString("echo planted\n")
	return b.String()
}

// A sandbox given the current directory (moat run --workdir .) plants
// Python there that the host's Python would run: venv.py and pip/ (which
// python -m finds first on sys.path), sitecustomize.py and usercustomize.py
// (found through a PYTHONPATH=. the user's shell may carry), and a .pth in a
// user site that PYTHONUSERBASE names. The next moat python from that
// directory, which builds a venv and installs a package, must not run any
// of it on the host: the host's Python runs with -I from /, with an
// allow-list environment, and pip runs only in the install sandbox. The
// positive control runs the same host command moat used to run (python3 -m
// venv, python -m pip) from that directory with that environment: the
// planted code runs and writes the marker.
func TestVenvHostCwdPlants(t *testing.T) {
	need(t, "/usr/bin/python3")
	wheels := t.TempDir()
	os.Chmod(wheels, 0o755)
	const pkg = "moat_esc_hostpkg"
	escWheel(t, wheels, pkg, "OK = True\n")
	pyDir := pyVersionDir(t)
	for _, tc := range []struct {
		name    string
		files   func(markers string) map[string]string
		env     func(cwd string) []string
		control func(scratch string) []string
	}{
		{"venv.py in the working directory",
			func(m string) map[string]string { return map[string]string{"venv.py": markerPayload(m, "venv.py")} },
			func(string) []string { return nil },
			func(s string) []string {
				return []string{"/usr/bin/python3", "-m", "venv", "--without-pip", filepath.Join(s, "v")}
			}},
		{"pip/__main__.py in the working directory",
			func(m string) map[string]string {
				return map[string]string{"pip/__init__.py": "", "pip/__main__.py": markerPayload(m, "pip") + "\nprint('Successfully installed " + pkg + "')\n"}
			},
			func(string) []string { return nil },
			func(string) []string { return []string{"/usr/bin/python3", "-m", "pip", "--version"} }},
		{"sitecustomize.py with PYTHONPATH=.",
			func(m string) map[string]string {
				return map[string]string{"sitecustomize.py": markerPayload(m, "sitecustomize")}
			},
			func(string) []string { return []string{"PYTHONPATH=."} },
			func(s string) []string {
				return []string{"/usr/bin/python3", "-m", "venv", "--without-pip", filepath.Join(s, "v")}
			}},
		{"usercustomize.py with PYTHONPATH=.",
			func(m string) map[string]string {
				return map[string]string{"usercustomize.py": markerPayload(m, "usercustomize")}
			},
			func(string) []string { return []string{"PYTHONPATH=."} },
			func(s string) []string {
				return []string{"/usr/bin/python3", "-m", "venv", "--without-pip", filepath.Join(s, "v")}
			}},
		{"a .pth in the user site PYTHONUSERBASE names",
			func(m string) map[string]string {
				return map[string]string{"lib/" + pyDir + "/site-packages/moat_evil.pth": markerPayload(m, "pth")}
			},
			func(cwd string) []string { return []string{"PYTHONUSERBASE=" + cwd} },
			func(s string) []string {
				return []string{"/usr/bin/python3", "-m", "venv", "--without-pip", filepath.Join(s, "v")}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cwd, markers, scratch := t.TempDir(), t.TempDir(), t.TempDir()
			cache := []string{"XDG_CACHE_HOME=" + filepath.Join(scratch, "cache")}
			// The sandbox plants the files; the host only reads them after.
			r := moatCLI(t, cwd, cache, "run", "--workdir", ".", "--", "/bin/sh", "-c", plantScript(tc.files(markers)))
			if r.Code != 0 || !strings.Contains(r.Stdout, "planted") {
				t.Fatalf("the sandbox could not plant the files: %s", r)
			}
			env := append(append([]string(nil), cache...), tc.env(cwd)...)
			r = moatCLI(t, cwd, env, "python", "--python", "/usr/bin/python3",
				"-p", pkg, "--find-links", wheels, "--no-index", "-c", "import "+pkg+"; print('imported', "+pkg+".OK)")
			if r.Code != 0 || !strings.Contains(r.Stdout, "imported True") {
				t.Fatalf("moat python did not build and use the venv: %s", r)
			}
			if entries, _ := os.ReadDir(markers); len(entries) != 0 {
				t.Fatalf("code a sandbox planted in the working directory ran on the host (%s): %s", entries[0].Name(), r)
			}
			// The positive control: the host command moat used to run.
			c := exec.Command(tc.control(scratch)[0], tc.control(scratch)[1:]...)
			c.Dir, c.Env = cwd, append(os.Environ(), tc.env(cwd)...)
			out, _ := c.CombinedOutput()
			if entries, _ := os.ReadDir(markers); len(entries) == 0 {
				t.Fatalf("control: the planted code did not run for a plain host %q either, so the probe proves nothing: %s", c.Args, out)
			}
		})
	}
}

// With --allow-pip-install the code writes the named venv's site-packages
// and bin/: it plants a .pth, shadows pip with one that claims success
// without installing, or replaces bin/python. The next moat python on that
// venv asking for another package must run none of it on the host (pip
// runs in the install sandbox, the host never runs the venv's python), and
// must not record a package that is not installed. The positive control
// is the host-side pip install into that venv that moat used to run: the
// planted code runs on the host.
func TestVenvWritableNamedVenvPlants(t *testing.T) {
	need(t, "/usr/bin/python3")
	wheels := t.TempDir()
	os.Chmod(wheels, 0o755)
	const first, next = "moat_esc_first", "moat_esc_next"
	escWheel(t, wheels, first, "OK = True\n")
	escWheel(t, wheels, next, "OK = True\n")
	for _, tc := range []struct {
		name      string
		plant     func(markers string) string // Python run in the code's sandbox, with SP and V set
		installed bool                        // the next install really installs
	}{
		{"a .pth in site-packages", func(m string) string {
			return "open(SP + '/moat_evil.pth', 'w').write(" + strconv.Quote(markerPayload(m, "pth")+"\n") + ")"
		}, true},
		{"a shadow pip that claims success", func(m string) string {
			return "open(SP + '/pip/__main__.py', 'w').write(" + strconv.Quote(markerPayload(m, "pip")+"\nprint('Successfully installed "+next+"')\n") + ")"
		}, false},
		{"bin/python replaced", func(m string) string {
			return "os.remove(V + '/bin/python'); open(V + '/bin/python', 'w').write(" +
				strconv.Quote("#!/bin/sh\necho ran > '"+filepath.Join(m, "bin-python")+"'\nexec /usr/bin/python3 \"$@\"\n") + "); os.chmod(V + '/bin/python', 0o755)"
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work, markers, scratch := t.TempDir(), t.TempDir(), t.TempDir()
			cache := filepath.Join(scratch, "cache")
			env := []string{"XDG_CACHE_HOME=" + cache}
			v := filepath.Join(scratch, "venv")
			base := []string{"python", "--venv", v, "--allow-pip-install", "--python", "/usr/bin/python3", "--find-links", wheels, "--no-index"}
			r := moatCLI(t, work, env, append(append([]string(nil), base...), "-p", first, "-c", "import "+first)...)
			if r.Code != 0 {
				t.Fatalf("building the venv: %s", r)
			}
			sp := sitePackages(t, v)
			prog := "import os\nSP, V = " + pyStr(sp) + ", " + pyStr(v) + "\n" + tc.plant(markers) + "\nprint('planted')\n"
			r = moatCLI(t, work, env, append(append([]string(nil), base...), "-p", first, "-c", prog)...)
			if r.Code != 0 || !strings.Contains(r.Stdout, "planted") {
				t.Fatalf("the code could not plant into the writable venv: %s", r)
			}
			r = moatCLI(t, work, env, append(append([]string(nil), base...), "-p", first, "-p", next, "-c", "import "+next+"; print('imported')")...)
			if entries, _ := os.ReadDir(markers); len(entries) != 0 {
				t.Fatalf("code planted in the writable venv ran on the host (%s): %s", entries[0].Name(), r)
			}
			m, err := venv.ReadManifest(filepath.Join(cache, "moat", "venvs", "named", venv.PathKey(v)+".json"))
			if err != nil {
				t.Fatalf("the manifest: %v", err)
			}
			recorded := slices.Contains(m.Packages, next)
			if tc.installed {
				if r.Code != 0 || !strings.Contains(r.Stdout, "imported") || !recorded {
					t.Fatalf("the install in the install sandbox failed (recorded=%v): %s", recorded, r)
				}
			} else {
				if r.Code == 0 || recorded {
					t.Fatalf("a package that was not installed was accepted (recorded=%v): %s", recorded, r)
				}
				if tc.name == "a shadow pip that claims success" && !strings.Contains(r.Stderr, next+" is not installed") {
					t.Fatalf("the refusal does not say what is missing: %s", r)
				}
			}
			// The positive control: the host-side install moat used to run.
			c := exec.Command(filepath.Join(v, "bin", "python"), "-m", "pip", "install", "--no-index", "--find-links", wheels, next)
			c.Dir = scratch
			out, _ := c.CombinedOutput()
			if entries, _ := os.ReadDir(markers); len(entries) == 0 {
				t.Fatalf("control: the planted code did not run for a host-side pip install either, so the probe proves nothing: %s", out)
			}
		})
	}
}
