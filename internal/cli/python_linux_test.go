package cli

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// systemPython is the distribution's interpreter, with venv, pip and
// python3-yaml, which ./test.sh installs.
const systemPython = "/usr/bin/python3"

// moat python end to end: a cached venv built on the host and reused, a
// script outside the working directory with its arguments, -c, standard
// input, the [python] table, a syntax error's exit code, and the errors
// for a bad venv and a package that cannot be installed.
func TestPythonCLI(t *testing.T) {
	if _, err := os.Stat(systemPython); err != nil {
		t.Fatalf("%s: %v; ./test.sh run as root installs it", systemPython, err)
	}
	dir := t.TempDir()
	cache := []string{"XDG_CACHE_HOME=" + filepath.Join(dir, "cache")}
	work := mkdir(t, dir, "work")
	scripts := mkdir(t, dir, "scripts")
	script := filepath.Join(scripts, "show.py")
	os.WriteFile(script, []byte("import sys, os, yaml\nprint(sys.argv[1:], os.environ['MPLBACKEND'], sys.prefix == os.environ['VIRTUAL_ENV'], yaml.safe_load('a: 1'))\n"), 0o644)
	notVenv := mkdir(t, dir, "notvenv")
	os.WriteFile(filepath.Join(notVenv, "x"), nil, 0o644)
	cfgFile := writeConfig(t, mkdir(t, dir, "cfg"), "[python]\npython = \""+systemPython+"\"\npackages = [\"PyYAML\"]\nno-index = true\n")
	py := []string{"python", "--python", systemPython, "--workdir", work}

	checks := []struct {
		name   string
		args   []string
		stdin  string
		expect []expect
	}{
		{name: "a script outside the working directory, with its arguments", args: append(append([]string(nil), py...), script, "a", "-p"),
			expect: []expect{exits(0), stdoutIs("['a', '-p'] Agg True {'a': 1}\n")}},
		{name: "-c, the venv reused without a word", args: append(append([]string(nil), py...), "-c", "import sys; print(sys.argv[1:])", "x"),
			expect: []expect{exits(0), stdoutIs("['x']\n"), stderrIs("")}},
		{name: "a package satisfied by system site-packages, offline", args: append(append([]string(nil), py...), "--no-index", "-p", "PyYAML", "-c", "import yaml; print(yaml.__name__)"),
			expect: []expect{exits(0), stdoutIs("yaml\n"), stderrHas("moat: venv: installing PyYAML")}},
		{name: "the [python] table", args: []string{"python", "--config", cfgFile, "--workdir", work, "-c", "import yaml, sys; print(yaml.__name__, sys.prefix != sys.base_prefix)"},
			expect: []expect{exits(0), stdoutIs("yaml True\n")}},
		{name: "standard input", args: append(append([]string(nil), py...), "-"), stdin: "print('from stdin')\n",
			expect: []expect{exits(0), stdoutIs("from stdin\n")}},
		{name: "a syntax error exits 1 with the report on stderr", args: append(append([]string(nil), py...), "-c", "def (:"),
			expect: []expect{exits(1), stderrHas("SyntaxError")}},
		{name: "a venv path that is not a venv", args: append(append([]string(nil), py...), "--venv", notVenv, "-c", "pass"),
			expect: []expect{exits(125), stderrHas("not a venv")}},
		{name: "a package that cannot be installed, with pip's message", args: append(append([]string(nil), py...), "--no-index", "--find-links", scripts, "-p", "moat-no-such-package", "-c", "pass"),
			expect: []expect{exits(125), stderrHas("ERROR: Could not find a version that satisfies the requirement moat-no-such-package")}},
		{name: "an index URL with --no-index", args: append(append([]string(nil), py...), "--index-url", "https://pypi.example/simple", "--no-index", "-c", "pass"),
			expect: []expect{exits(2), stderrHas("--index-url")}},
		{name: "no interpreter", args: []string{"python", "--python", "moat-no-such-python", "-c", "pass"},
			expect: []expect{exits(125), stderrHas("moat-no-such-python not found")}},
	}
	for _, tc := range checks {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(moatBin, tc.args...)
			cmd.Env = append(os.Environ(), cache...)
			cmd.Stdin = strings.NewReader(tc.stdin)
			var out, errb strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &errb
			err := cmd.Run()
			r := result{stdout: out.String(), stderr: errb.String()}
			if ee, ok := err.(*exec.ExitError); ok {
				r.code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			for _, e := range tc.expect {
				if problem := e(r); problem != "" {
					t.Fatalf("moat %s: %s\nstdout: %s\nstderr: %s", strings.Join(tc.args, " "), problem, r.stdout, r.stderr)
				}
			}
		})
	}
	if entries, _ := os.ReadDir(work); len(entries) != 0 {
		t.Fatalf("the venv or its files landed in the working directory: %v", entries)
	}
}

// stderrHas expects want somewhere in standard error.
func stderrHas(want string) expect {
	return func(r result) string {
		if !strings.Contains(r.stderr, want) {
			return "stderr lacks " + want
		}
		return ""
	}
}

// moat python with no script on a terminal is the interactive
// interpreter, on a terminal of its own, and exits with its status.
func TestPythonREPL(t *testing.T) {
	requireSandbox(t)
	cmd := exec.Command(moatBin, "python", "--python", systemPython)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(t.TempDir(), "cache"))
	master, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: 80})
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	watchdog := time.AfterFunc(60*time.Second, func() { _ = cmd.Process.Kill() })
	defer watchdog.Stop()
	out := &ptyOutput{more: make(chan struct{}, 1)}
	go out.collect(master)
	if !out.waitFor(30*time.Second, ">>> ") {
		t.Fatalf("no prompt: %q", out.String())
	}
	master.Write([]byte("import os, sys; print(6*7, os.isatty(0), sys.prefix == os.environ['VIRTUAL_ENV'])\n"))
	if !out.waitFor(20*time.Second, "42 True True") {
		t.Errorf("no answer: %q", out.String())
	}
	master.Write([]byte("raise SystemExit(4)\n"))
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 4 {
		t.Errorf("moat python ended with %v, want exit code 4; output %q", err, out.String())
	}
}

// Every example of moat python --help works as written, offline, from a
// directory holding what they name, with the system interpreter first on
// PATH (numpy is Debian's, reached through system site-packages).
func TestMoatPythonHelpExamples(t *testing.T) {
	requireSandbox(t)
	// The wheels lie beside the project, not in it: a --find-links
	// directory in a place a sandbox writes is refused.
	dir := filepath.Join(t.TempDir(), "project")
	os.Mkdir(dir, 0o755)
	os.Mkdir(filepath.Join(dir, "..", "wheels"), 0o755)
	os.WriteFile(filepath.Join(dir, "analysis.py"), []byte("import sys, numpy\nprint('rows', len(open(sys.argv[1]).read().split()), numpy.__name__)\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "data.csv"), []byte("a\n1\n2\n"), 0o644)
	writeTestWheel(t, filepath.Join(dir, "..", "wheels"), "mypkg")
	cache := filepath.Join(t.TempDir(), "cache") // outside the working directory
	want := []string{"3.", "rows 3 numpy", "mypkg", "42"}
	examples := strings.Split(newPythonCmd(stdio{}).Example, "\n")
	if len(examples) != len(want) {
		t.Fatalf("help has %d examples, the test knows %d", len(examples), len(want))
	}
	for i, ex := range examples {
		line := strings.TrimSpace(ex)
		if i := strings.Index(line, "   #"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		t.Run(line, func(t *testing.T) {
			cmd := exec.Command("sh", "-c", strings.Replace(line, "moat ", moatBin+" ", 1))
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "PATH=/usr/bin:"+os.Getenv("PATH"), "XDG_CACHE_HOME="+cache)
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), want[i]) {
				t.Fatalf("%s: %v: %s (want %q)", line, err, out, want[i])
			}
		})
	}
}

// writeTestWheel writes a minimal pure-Python wheel of pkg into dir: the
// module, METADATA, WHEEL and a RECORD listing them.
func writeTestWheel(t *testing.T, dir, pkg string) {
	t.Helper()
	info := pkg + "-1.0.dist-info/"
	files := [][2]string{
		{pkg + "/__init__.py", "NAME = '" + pkg + "'\n"},
		{info + "METADATA", "Metadata-Version: 2.1\nName: " + pkg + "\nVersion: 1.0\n"},
		{info + "WHEEL", "Wheel-Version: 1.0\nGenerator: moat-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	var record strings.Builder
	for _, f := range files {
		w, _ := zw.Create(f[0])
		w.Write([]byte(f[1]))
		sum := sha256.Sum256([]byte(f[1]))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f[0], base64.RawURLEncoding.EncodeToString(sum[:]), len(f[1]))
	}
	record.WriteString(info + "RECORD,,\n")
	w, _ := zw.Create(info + "RECORD")
	w.Write([]byte(record.String()))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, pkg+"-1.0-py3-none-any.whl"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
