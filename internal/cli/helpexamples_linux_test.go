package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Every example of moat run --help works as written, run by a shell from
// a directory holding what the examples name (script.py, job/build.sh,
// moat.toml, a Makefile), with moat standing for the binary under test.
func TestMoatRunHelpExamples(t *testing.T) {
	requireSandbox(t)
	dir := t.TempDir()
	os.Chmod(dir, 0o777)
	files := map[string]string{
		"script.py":    "import os\nprint('script ran', os.environ.get('PYTHONHASHSEED'))\n",
		"job/build.sh": "echo build ran\n",
		"moat.toml":    "isolation = \"strict\"\n",
		"Makefile":     "test:\n\t@echo make test ran\n",
	}
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o777)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(filepath.Join(dir, "job"), 0o777)
	want := map[string]string{
		"hello from the sandbox": "python3 -c",
		"script ran 0":           "script.py",
		"build ran":              "build.sh",
		"make test ran":          "make test",
	}
	examples := strings.Split(newRunCmd(stdio{}).Example, "\n")
	if len(examples) < 4 {
		t.Fatalf("help has %d examples", len(examples))
	}
	for _, ex := range examples {
		line := strings.TrimSpace(ex)
		if i := strings.Index(line, "   #"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		t.Run(line, func(t *testing.T) {
			if strings.Contains(line, "make") {
				if _, err := exec.LookPath("make"); err != nil {
					t.Fatalf("make is not installed, so the make example cannot be checked: %v", err)
				}
			}
			cmd := exec.Command("sh", "-c", strings.ReplaceAll(line, "moat ", moatBin+" "))
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v: %s", line, err, out)
			}
			for text, key := range want {
				if strings.Contains(line, key) && !strings.Contains(string(out), text) {
					t.Fatalf("%s printed %q, want %q", line, out, text)
				}
			}
		})
	}
}
