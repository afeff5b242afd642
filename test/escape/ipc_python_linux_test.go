//go:build linux

package escape_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

// With AllowPipInstall the venv's bin/ is writable and executable, and
// PythonCommand puts it on PATH: a program the code writes there under a
// shim's name must not shadow the shim, so the IPC shims stay first.
// Control: run by its path, the planted program does run.
func TestIPCShimNotShadowedByWritableVenv(t *testing.T) {
	need(t, "/usr/bin/python3")
	r, count := ipcRouter(t)
	v, err := (&moat.VenvManager{}).Create(context.Background(), moat.VenvConfig{
		Path: filepath.Join(t.TempDir(), "venv"), Python: "/usr/bin/python3", Backend: moat.VenvPython,
	})
	if err != nil {
		t.Fatal(err)
	}
	sb := newSandbox(t, moat.Config{IPC: r, Isolation: moat.IsolationDefault,
		Python: &moat.PythonConfig{Venv: v.Path, AllowPipInstall: true}})
	plant := `import os, subprocess
p = os.path.join(os.environ["VIRTUAL_ENV"], "bin", "counter")
open(p, "w").write("#!/bin/sh\necho planted\n")
os.chmod(p, 0o755)
print("BYNAME", subprocess.run(["counter"], capture_output=True, text=True).stdout.strip())
print("BYPATH", subprocess.run([p], capture_output=True, text=True).stdout.strip())
`
	out, err := sb.PythonCommand("-c", plant).CombinedOutput()
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, out)
	}
	s := string(out)
	if !strings.Contains(s, "BYNAME host-count=1") || count() != 1 {
		t.Errorf("by name, the venv's planted counter ran instead of the shim (host calls %d):\n%s", count(), s)
	}
	// Control: the planted program is there and runs by its path.
	if !strings.Contains(s, "BYPATH planted") {
		t.Errorf("control: the planted program did not run by its path:\n%s", s)
	}
	os.RemoveAll(filepath.Join(v.Path, "bin", "counter"))
}

// A command whose own Env sets PATH, with a directory the code writes and
// executes first (the working directory in build mode), still finds the
// shims first. Control: the planted program runs by its path.
func TestIPCShimFirstWhenCmdEnvSetsPath(t *testing.T) {
	r, count := ipcRouter(t)
	sb := newSandbox(t, moat.Config{IPC: r, Isolation: moat.IsolationDefault, Build: true})
	wd := sb.WorkDir()
	if res := sh(t, sb, `printf '#!/bin/sh\necho planted\n' > counter && chmod +x counter && ./counter`); !strings.Contains(res.Stdout, "planted") {
		t.Fatalf("control: the planted program does not run by its path: %s", res)
	}
	c := sb.Command("/bin/sh", "-c", "counter")
	c.Env = []string{"PATH=" + wd + ":/usr/bin:/bin"}
	res := runCmd(c)
	if !strings.Contains(res.Stdout, "host-count=1") || count() != 1 {
		t.Errorf("with Cmd.Env's PATH, counter ran the planted program (host calls %d): %s", count(), res)
	}
}
