//go:build linux

package workloads_test

import (
	"github.com/moat-sandbox/moat/internal/moattest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// toolEnv names the program ./test.sh installs in a toolchain directory
// of its own under /usr/local (/usr/local/moat-test-tool/bin) and puts on
// the suite's PATH.
const toolEnv = "MOAT_WORKLOADS_TOOL"

// The host's PATH reaches the sandbox: a program in a toolchain directory
// under /usr/local/<tool>/bin and one in the home's ~/.local/bin resolve
// inside exactly as on the host, and so do go and python3.
func TestPathResolvesAsOnHost(t *testing.T) {
	tool := os.Getenv(toolEnv)
	if tool == "" {
		t.Skipf("SKIPPING: %s is not set; ./test.sh run as root creates /usr/local/moat-test-tool/bin/moat-test-tool and sets it", toolEnv)
	}
	if fi, err := os.Stat(tool); err != nil || fi.Mode()&0o111 == 0 {
		t.Fatalf("%s=%s is not an executable file: %v", toolEnv, tool, err)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(home, ".local", "bin")
	if _, err := os.Stat(bin); os.IsNotExist(err) {
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(bin); os.Remove(filepath.Dir(bin)) })
	}
	homeTool := filepath.Join(bin, "moat-wl-home-tool")
	if err := moattest.WriteFile(homeTool, []byte("#!/bin/sh\necho home-tool-ran\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(homeTool) })
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	names := []string{filepath.Base(tool), "moat-wl-home-tool", "go", "python3", "sh"}
	script := ""
	for _, n := range names {
		script += "command -v " + n + " || echo missing " + n + "\n"
	}
	host, err := exec.Command("/bin/sh", "-c", script).Output()
	if err != nil {
		t.Fatalf("host: %v", err)
	}
	if strings.Contains(string(host), "missing") {
		t.Fatalf("the host itself does not resolve every name on PATH=%s:\n%s", os.Getenv("PATH"), host)
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			sb := newSandbox(t, config("", m.build))
			r := sh(t, sb, script)
			mustPass(t, "command -v", r)
			if r.Out != string(host) {
				t.Fatalf("inside the sandbox the names resolve as\n%s\non the host as\n%s", r.Out, host)
			}
			r = sh(t, sb, filepath.Base(tool)+" && moat-wl-home-tool")
			if !r.ok() || !strings.Contains(r.Out, "test-tool-ran") || !strings.Contains(r.Out, "home-tool-ran") {
				t.Fatalf("the PATH programs did not run: %s", r)
			}
		})
	}
}
