//go:build linux

package escape_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// slowPkg is a source distribution whose build backend, while a file
// named "slow" sits in the --find-links directory, marks the venv it
// builds into and then sleeps: a venv build that is certainly under way
// when the test kills moat.
const slowPkg = "moat_slow_build"

func slowBackend(links string) string {
	return `import os, sys, time, zipfile
LINKS = ` + strconv.Quote(links) + `

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    if os.path.exists(os.path.join(LINKS, 'slow')):
        open(os.path.join(sys.prefix, 'moat-slow-started'), 'w').close()
        time.sleep(600)
    info = '` + slowPkg + `-1.0.dist-info/'
    files = {
        '` + slowPkg + `/__init__.py': 'OK = 1\n',
        info + 'METADATA': 'Metadata-Version: 2.1\nName: ` + slowPkg + `\nVersion: 1.0\n',
        info + 'WHEEL': 'Wheel-Version: 1.0\nGenerator: moat-escape\nRoot-Is-Purelib: true\nTag: py3-none-any\n',
    }
    name = '` + slowPkg + `-1.0-py3-none-any.whl'
    with zipfile.ZipFile(os.path.join(wheel_directory, name), 'w') as z:
        for n, c in files.items():
            z.writestr(n, c)
        z.writestr(info + 'RECORD', ''.join(n + ',,\n' for n in files) + info + 'RECORD,,\n')
    return name
`
}

// processesUnder lists the processes whose command line or working
// directory mentions root: what is left of a build in root's venv cache.
func processesUnder(root string) []string {
	var left []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil || e.Name() == strconv.Itoa(os.Getpid()) {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		cwd, _ := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if bytes.Contains(cmd, []byte(root)) || strings.HasPrefix(cwd, root) {
			left = append(left, e.Name()+": "+strings.ReplaceAll(string(cmd), "\x00", " "))
		}
	}
	return left
}

// TestVenvBuildKilled: a signal that stops moat python while it builds
// its venv stops the build too, and leaves nothing half built: no process
// of the build lingers, and the next run (the same venv) succeeds with a
// venv built again, not the half-built one. SIGTERM is caught, ends the
// build and exits 143 (SIGINT, SIGHUP and SIGQUIT take the same path);
// SIGKILL gives moat no say, and the next run recognises the half-built
// venv by the build record the killed one left. A SIGKILL can land at any
// step, so after it the test also takes away the venv's pyvenv.cfg, as a
// kill during python -m venv leaves it: the next run must not stumble on
// that either.
func TestVenvBuildKilled(t *testing.T) {
	need(t, "python3")
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			root := t.TempDir()
			links := filepath.Join(root, "links")
			if err := os.Mkdir(links, 0o755); err != nil {
				t.Fatal(err)
			}
			writeSdistNamed(t, links, slowPkg, slowBackend(links))
			if err := os.WriteFile(filepath.Join(links, "slow"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			env := []string{"XDG_CACHE_HOME=" + filepath.Join(root, "cache"), "XDG_STATE_HOME=" + filepath.Join(root, "state")}
			args := []string{"python", "--venv-backend", "python", "--no-index", "--find-links", links, "-p", slowPkg, "-c", "import " + slowPkg + "; print('ran', " + slowPkg + ".OK)"}
			c := moatCLICmd(t, root, env, args...)
			var errb bytes.Buffer
			c.Stderr = &errb
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- c.Wait() }()
			deadline := time.Now().Add(120 * time.Second)
			for {
				m, _ := filepath.Glob(filepath.Join(root, "cache", "moat", "venvs", "*", "moat-slow-started"))
				if len(m) > 0 {
					break
				}
				select {
				case err := <-exited:
					t.Fatalf("moat python ended before the build started: %v\n%s", err, errb.String())
				case <-time.After(100 * time.Millisecond):
				}
				if time.Now().After(deadline) {
					c.Process.Kill()
					t.Fatalf("the build never started\n%s", errb.String())
				}
			}
			if err := c.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-exited:
				if sig != syscall.SIGKILL {
					if ee, ok := err.(interface{ ExitCode() int }); !ok || ee.ExitCode() != 128+int(sig) {
						t.Errorf("moat ended with %v, want exit %d\n%s", err, 128+int(sig), errb.String())
					}
					if !strings.Contains(errb.String(), "venv") || !strings.Contains(errb.String(), "stopped") {
						t.Errorf("stderr does not say the venv build was stopped:\n%s", errb.String())
					}
				}
			case <-time.After(30 * time.Second):
				c.Process.Kill()
				t.Fatalf("moat still runs 30 s after %v\n%s", sig, errb.String())
			}
			// Nothing of the build lingers (polled: a killed sandbox's
			// processes take a moment to go).
			var left []string
			for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				if left = processesUnder(root); len(left) == 0 || time.Now().After(end) {
					break
				}
			}
			if len(left) > 0 {
				t.Errorf("10 s after %v, the build's processes remain:\n%s", sig, strings.Join(left, "\n"))
			}

			venvs, _ := filepath.Glob(filepath.Join(root, "cache", "moat", "venvs", "*", "pyvenv.cfg"))
			if sig == syscall.SIGKILL {
				for _, cfg := range venvs {
					if err := os.Remove(cfg); err != nil {
						t.Fatal(err)
					}
				}
			} else if len(venvs) > 0 {
				t.Errorf("a stopped build kept its venv: %v", venvs)
			}

			// The next run builds a complete venv and runs.
			if err := os.Remove(filepath.Join(links, "slow")); err != nil {
				t.Fatal(err)
			}
			r := moatCLI(t, root, env, args...)
			if r.Code != 0 || r.Stdout != "ran 1\n" {
				t.Fatalf("the run after %v: want exit 0 and \"ran 1\"\n%s", sig, r)
			}
			if m, _ := filepath.Glob(filepath.Join(root, "cache", "moat", "venvs", "*", "moat-slow-started")); len(m) > 0 {
				t.Errorf("the next run reused the half-built venv: %v", m)
			}
		})
	}
}
