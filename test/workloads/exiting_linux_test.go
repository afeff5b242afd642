//go:build linux

package workloads_test

import (
	"strings"
	"testing"
)

// thrPy exits with its threads alive and holding memory: eight daemon
// threads hold 20 MB each, the main thread leaves with os._exit after
// 20 ms. Every thread of the group is then exiting at once (exit_group),
// the normal end of a multi-threaded process.
const thrPy = `import os, threading, time
def hold():
    b = bytearray(20 << 20)
    time.sleep(60)
for _ in range(8):
    threading.Thread(target=hold, daemon=True).start()
time.sleep(0.02)
os._exit(0)
`

// The memory watch without cgroups must not take a thread group that is
// exiting (its threads have dropped their memory) for one that hides its
// memory: such a loop of multi-threaded processes, and a loop of go
// builds (the go command and the compiler are multi-threaded), pass under
// the default memory limit. Before the fix the Python loop was killed
// ("its leader exited and none of its threads shows its memory") in a few
// seconds.
func TestPythonThreadsExiting(t *testing.T) {
	need(t, "python3")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"thr.py": thrPy})
	sb := newSandbox(t, config(dir, false))
	r := sh(t, sb, `for i in $(seq 120); do python3 thr.py || exit 9; done; echo LOOP-DONE`)
	if !r.ok() || !strings.Contains(r.Out, "LOOP-DONE") {
		t.Fatalf("120 runs of a Python program that exits with 8 threads alive: %s", r)
	}
}

func TestGoBuildLoop(t *testing.T) {
	need(t, "go")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"go.mod":  "module example.com/hello\n\ngo 1.21\n",
		"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n",
	})
	sb := newSandbox(t, config(dir, false))
	r := sh(t, sb, `for i in 1 2 3 4 5 6; do go build -o hello . || exit 9; rm -f hello; done; echo LOOP-DONE`)
	if !r.ok() || !strings.Contains(r.Out, "LOOP-DONE") {
		t.Fatalf("a loop of go builds: %s", r)
	}
}
