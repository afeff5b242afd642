//go:build linux

package escape_test

// Controls: what ordinary generated code does must keep working in the
// default sandbox. A sandbox that breaks these would pass every escape test
// for the wrong reason.

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

// TestControlPython: Python runs, imports the standard library and starts
// subprocesses.
func TestControlPython(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, moat.Config{})
	r := python(t, sb, `
import json, subprocess, sys
print(json.dumps({"answer": 6 * 7}))
p = subprocess.run(["true"])
q = subprocess.run(["sh", "-c", "echo from-child"], capture_output=True, text=True)
print("true-rc=%d child=%s" % (p.returncode, q.stdout.strip()))
`)
	if r.Err != nil {
		t.Fatalf("python: %s", r)
	}
	mustContain(t, r, `{"answer": 42}`)
	mustContain(t, r, "true-rc=0 child=from-child")
}

const helloC = `#include <stdio.h>
int main(void) { puts("hello-from-c"); return 0; }
`

// TestControlGCC: gcc compiles in the working directory; a program built
// into a WRITE|EXEC grant runs.
func TestControlGCC(t *testing.T) {
	t.Parallel()
	need(t, "gcc")
	bin := t.TempDir()
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	sb := newSandbox(t, moat.Config{Grants: []moat.Grant{{Path: bin, Access: moat.WRITE | moat.EXEC}}})
	write := "cat > hello.c <<'EOF'\n" + helloC + "EOF\n"
	for _, tc := range []struct{ name, script, want string }{
		{"syntax-only", "gcc -fsyntax-only hello.c && echo SYNTAX-OK", "SYNTAX-OK"},
		{"object", "gcc -c -o hello.o hello.c && test -s hello.o && echo OBJECT-OK", "OBJECT-OK"},
		{"link-in-workdir", "gcc -o hello hello.c && test -s hello && echo LINK-OK", "LINK-OK"},
		{"preprocess", "gcc -E hello.c | grep -q puts && echo CPP-OK", "CPP-OK"},
		{"build-and-run-in-exec-grant", "gcc -o " + bin + "/hello hello.c && " + bin + "/hello", "hello-from-c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Sequential: the cases share hello.c in one working directory.
			r := sh(t, sb, write+tc.script)
			if r.Err != nil {
				t.Fatalf("%s: %s", tc.script, r)
			}
			mustContain(t, r, tc.want)
		})
	}
}

// TestControlGit: git works in a supplied working directory that is a
// repository: commits, branches and merges, with its hooks and config
// read-only. The repository is created on the host, since a sandbox may not
// create one (with hooks and config of its choosing) in a directory that
// outlives it.
func TestControlGit(t *testing.T) {
	t.Parallel()
	need(t, "git")
	wd := t.TempDir()
	if r := hostSh(t, "cd "+wd+" && git init -q -b main . && git config user.email moat@example.invalid && git config user.name 'Moat Test'"); r.Err != nil {
		t.Fatalf("git init on the host: %s", r)
	}
	sb := newSandbox(t, moat.Config{WorkDir: wd})
	r := sh(t, sb, `set -e
echo one > file.txt
git add file.txt
git commit -q -m first
git checkout -q -b feature
echo two >> file.txt
git commit -q -am second
git checkout -q main
git merge -q --ff-only feature
git log --oneline | wc -l
git status --porcelain | wc -l
git branch --list
git diff HEAD~1 --stat
`)
	if r.Err != nil {
		t.Fatalf("git: %s", r)
	}
	lines := strings.Fields(r.Stdout)
	if len(lines) < 2 || lines[0] != "2" || lines[1] != "0" {
		t.Fatalf("want 2 commits and a clean tree, got: %s", r)
	}
	mustContain(t, r, "feature")
	mustContain(t, r, "file.txt")
	if _, err := os.Stat(filepath.Join(wd, ".git", "HEAD")); err != nil {
		t.Fatalf("repository not in the supplied working directory: %v", err)
	}
}

// TestControlLoopbackHTTPServer: a server the sandboxed code starts on its
// loopback answers curl from the same sandbox.
func TestControlLoopbackHTTPServer(t *testing.T) {
	t.Parallel()
	need(t, "curl")
	sb := newSandbox(t, moat.Config{})
	needNamespaces(t, sb)
	port := 20000 + rand.IntN(20000)
	r := sh(t, sb, fmt.Sprintf(`
echo served-marker > marker.txt
python3 -m http.server --bind 127.0.0.1 %[1]d >server.log 2>&1 &
pid=$!
i=0
until curl -s -o /dev/null http://127.0.0.1:%[1]d/; do
	i=$((i+1)); [ $i -gt 100 ] && { echo NO-SERVER; cat server.log; break; }
	sleep 0.1
done
curl -sS --max-time 5 http://127.0.0.1:%[1]d/marker.txt
kill $pid
wait $pid
echo "server-exit=$?"
`, port))
	mustContain(t, r, "served-marker")
	mustContain(t, r, "server-exit=143")
}

// TestControlShellAndDevices: pipes, FIFOs, signals between the sandbox's
// own processes, /proc/self and the harmless devices work.
func TestControlShellAndDevices(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, moat.Config{})
	for _, tc := range []struct{ name, script, want string }{
		{"pipe", "echo hi | tr a-z A-Z", "HI"},
		{"fifo", "mkfifo f && { echo via-fifo > f & } && cat f && wait && rm f", "via-fifo"},
		{"kill-own-child", "sleep 10 & kill $!; wait $!; echo status=$?", "status=143"},
		{"python-kill-own-child", `python3 -c '
import os, signal, subprocess
p = subprocess.Popen(["sleep", "10"])
os.kill(p.pid, signal.SIGTERM)
print("rc=%d" % p.wait())'`, "rc=-15"},
		{"proc-self-status", "grep -E '^(Name|Pid|Seccomp):' /proc/self/status", "Seccomp:"},
		{"proc-self-fd", "ls /proc/self/fd/ && readlink /proc/self/exe", "/usr/bin/"},
		{"dev-null-write", "echo discard > /dev/null && echo NULL-W-OK", "NULL-W-OK"},
		{"dev-null-read", "wc -c < /dev/null", "0"},
		{"dev-urandom", "head -c 16 /dev/urandom | wc -c", "16"},
		{"dev-random", "head -c 8 /dev/random | wc -c", "8"},
		{"dev-zero", "head -c 1024 /dev/zero | tr -d '\\000' | wc -c; head -c 1024 /dev/zero | wc -c", "1024"},
		{"dev-full", "echo x > /dev/full 2>/dev/null || echo FULL-ENOSPC", "FULL-ENOSPC"},
		{"ls-dev", "ls /dev", "null"},
		{"stderr-redirect", "echo to-stderr > /dev/stderr", "to-stderr"},
		{"stdout-redirect", "echo to-stdout > /dev/stdout", "to-stdout"},
		{"dev-fd", "echo via-dev-fd | cat /dev/fd/0", "via-dev-fd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := sh(t, sb, tc.script)
			if r.Err != nil {
				t.Fatalf("%s: %s", tc.script, r)
			}
			mustContain(t, r, tc.want)
		})
	}
}

// TestControlGoToolchain: the Go toolchain in /usr/local/go runs.
func TestControlGoToolchain(t *testing.T) {
	t.Parallel()
	const goBin = "/usr/local/go/bin/go"
	if _, err := os.Stat(goBin); err != nil {
		t.Skipf("%s is not installed on this host", goBin)
	}
	sb := newSandbox(t, moat.Config{})
	wd := sb.WorkDir()
	c := sb.Command(goBin, "version")
	out, err := c.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "go version go") {
		t.Fatalf("go version: %v: %s", err, out)
	}
	c = sb.Command(goBin, "env", "GOROOT", "GOCACHE")
	c.Env = []string{"GOCACHE=" + filepath.Join(wd, "gocache"), "GOPATH=" + filepath.Join(wd, "gopath")}
	out, err = c.CombinedOutput()
	if err != nil {
		t.Fatalf("go env: %v: %s", err, out)
	}
	if lines := strings.Fields(string(out)); len(lines) != 2 || lines[0] != "/usr/local/go" || lines[1] != filepath.Join(wd, "gocache") {
		t.Fatalf("go env: want GOROOT /usr/local/go and GOCACHE in the working directory, got %q", out)
	}
}
