package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runMoatStdin runs the moat binary with stdin as its standard input.
func runMoatStdin(t *testing.T, env []string, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(moatBin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

// heel's command lines, run as a heel user would: each works unchanged,
// with a control that moat's own spelling does the same.
func TestHeelCommandLines(t *testing.T) {
	requireSandbox(t)
	dir := t.TempDir()
	tmp := mkdir(t, dir, "tmp") // the kept working directories land here
	env := []string{"TMPDIR=" + tmp}
	t.Run("--config - reads standard input, and the command gets /dev/null", func(t *testing.T) {
		r := runMoatStdin(t, env, "[limits]\nmax-processes = 41\n[env.set]\nFROM_STDIN = \"yes\"\n",
			"run", "--config", "-", "--", "sh", "-c", `echo "$FROM_STDIN"; cat; echo "[end]"`)
		for _, e := range []expect{exits(0), stdoutIs("yes\n[end]\n"), stderrIs("")} {
			if p := e(r); p != "" {
				t.Error(p)
			}
		}
		// Control: without --config -, the command reads moat's stdin.
		r = runMoatStdin(t, env, "piped\n", "run", "--", "sh", "-c", `cat; echo "[end]"`)
		if r.code != 0 || r.stdout != "piped\n[end]\n" {
			t.Errorf("control: stdin not passed on: %+v", r)
		}
	})
	t.Run("--config - is refused for the shell", func(t *testing.T) {
		r := runMoatStdin(t, env, "", "shell", "-c", "-")
		for _, e := range []expect{exits(2), oneMoatLine("--config -", "terminal")} {
			if p := e(r); p != "" {
				t.Error(p)
			}
		}
	})
	t.Run("--keep-working-dir keeps the fresh one and names it", func(t *testing.T) {
		r := runMoat(t, env, "run", "--keep-working-dir", "--", "sh", "-c", "echo kept > out.txt; pwd")
		if r.code != 0 {
			t.Fatalf("%+v", r)
		}
		wd := strings.TrimSpace(r.stdout)
		if r.stderr != "moat: working directory kept: "+wd+"\n" || !strings.HasPrefix(wd, tmp+"/moat-kept-") {
			t.Fatalf("stdout %q, stderr %q", r.stdout, r.stderr)
		}
		if data, err := os.ReadFile(filepath.Join(wd, "out.txt")); err != nil || string(data) != "kept\n" {
			t.Errorf("the kept directory lost what the command wrote: %q, %v", data, err)
		}
		// Control: without it the fresh directory is removed.
		r = runMoat(t, env, "run", "--", "sh", "-c", "pwd")
		if _, err := os.Stat(strings.TrimSpace(r.stdout)); r.code != 0 || err == nil || r.stderr != "" {
			t.Errorf("control: a fresh working directory stayed: %+v, %v", r, err)
		}
	})
	t.Run("a missing --working-dir is created and kept", func(t *testing.T) {
		wd := filepath.Join(dir, "new", "job")
		r := runMoat(t, env, "run", "--working-dir", wd, "--", "sh", "-c", "echo hi > f; pwd")
		if r.code != 0 || strings.TrimSpace(r.stdout) != wd || r.stderr != "" {
			t.Fatalf("%+v", r)
		}
		if data, err := os.ReadFile(filepath.Join(wd, "f")); err != nil || string(data) != "hi\n" {
			t.Errorf("%q, %v", data, err)
		}
	})
	t.Run("-v traces each layer", func(t *testing.T) {
		r := runMoat(t, env, "run", "-v", "--max-memory", "1G", "--network", "allow", "--", "true")
		if r.code != 0 || !strings.Contains(r.stderr, "moat: trace: sandbox: ") || !strings.Contains(r.stderr, "moat: trace: host: ") {
			t.Errorf("%+v", r)
		}
		// Control: without -v, nothing.
		if r := runMoat(t, env, "run", "--max-memory", "1G", "--", "true"); r.code != 0 || r.stderr != "" {
			t.Errorf("control: %+v", r)
		}
	})
	t.Run("-e and --env-passthrough", func(t *testing.T) {
		r := runMoat(t, append(env, "HEEL_THROUGH=host"), "run", "-e", "HEEL_SET=1", "--env-passthrough", "HEEL_THROUGH", "--", "sh", "-c", `echo "$HEEL_SET $HEEL_THROUGH"`)
		if r.code != 0 || r.stdout != "1 host\n" {
			t.Errorf("%+v", r)
		}
	})
}

// moat run honours the config file's [python] table, as heel does: the
// command runs with the venv activated. Control: without the table,
// python3 is the system's.
func TestHeelRunPythonTable(t *testing.T) {
	requireSandbox(t)
	if _, err := os.Stat(systemPython); err != nil {
		t.Fatalf("%s: %v; ./test.sh run as root installs it", systemPython, err)
	}
	dir := t.TempDir()
	venv := filepath.Join(dir, "venv")
	cfgFile := writeConfig(t, mkdir(t, dir, "cfg"), "[python]\nvenv = \""+venv+"\"\ninterpreter = \""+systemPython+"\"\n")
	probe := `import sys, os; print(sys.prefix, os.environ.get("VIRTUAL_ENV"))`
	r := runMoat(t, nil, "run", "-c", cfgFile, "--", "python3", "-c", probe)
	if r.code != 0 || r.stdout != venv+" "+venv+"\n" {
		t.Fatalf("with [python]: %+v", r)
	}
	r = runMoat(t, nil, "run", "--", "python3", "-c", probe)
	if r.code != 0 || strings.Contains(r.stdout, venv) || !strings.HasSuffix(r.stdout, " None\n") {
		t.Errorf("control, without [python]: %+v", r)
	}
}
