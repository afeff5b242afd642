//go:build linux

package escape_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/ipc"
)

// Outside attacks on typed IPC (Config.IPC) that the authors' battery
// (ipc_linux_test.go) does not try.

// wordsRouter registers words, whose []string positional takes every
// remaining word (the shape ipc.Positional documents), and counts calls.
func wordsRouter(t *testing.T) *ipc.Router {
	t.Helper()
	type args struct {
		Words []string `json:"words"`
	}
	r := ipc.NewRouter()
	if err := ipc.Register(r, "words", func(_ context.Context, a args, _ ipc.Call) (string, error) {
		return fmt.Sprintf("got=%d\n", len(a.Words)), nil
	}, ipc.Positional("words")); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestIPCArgvParseLinear: a command line of N words must cost the host
// about N, not N². The server's argv parser (ipc/args.go, set for a
// []string field) unmarshals and re-marshals the whole list for every
// word: 2,000 words take 0.5 s, 10,000 take 14 s, 20,000 (a 40 KB
// command line; ARG_MAX allows 2 MB, a raw 16 MiB frame 4 million words)
// take 72 s of a host core, and Close, which waits for the handler
// goroutine, hangs with it. Control: 500 words answer at once.
func TestIPCArgvParseLinear(t *testing.T) {
	sb, err := moat.New(moat.Config{IPC: wordsRouter(t), Isolation: moat.IsolationDefault})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			go sb.Close() // a hung Close must not hang the battery
		}
	}()
	call := func(n int, limit time.Duration) (result, time.Duration) {
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		defer cancel()
		c := sb.CommandContext(ctx, "/bin/sh", "-c", fmt.Sprintf(`words $(seq %d | tr -c '\n' 7)`, n))
		start := time.Now()
		return runCmd(c), time.Since(start)
	}
	if r, d := call(500, 20*time.Second); !strings.Contains(r.Stdout, "got=500") || d > 5*time.Second {
		t.Fatalf("control: 500 words took %v: %s", d, r)
	}
	r, d := call(20000, 10*time.Second)
	t.Logf("20000 words: %v, %s", d, strings.TrimSpace(r.Stdout))
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- sb.Close() }()
	select {
	case err := <-done:
		closed = true
		t.Logf("Close took %v (%v)", time.Since(start), err)
	case <-time.After(5 * time.Second):
		t.Errorf("Close still waits after 5s for the handler parsing 20000 words")
	}
	if !strings.Contains(r.Stdout, "got=20000") {
		t.Fatalf("20000 words did not come back within 10s (took %v): the argv parser is quadratic: %s", d, r)
	}
}

// TestIPCVenvBinCannotShadowShim: the shims must come first on the PATH of
// every command, so that no program the sandbox writes answers to a
// shim's name (ipc_linux_test.go's TestIPCShimsCannotBeShadowed checks
// sb.Command only). PythonCommand with a venv whose bin/ the sandbox may
// write and execute (AllowPipInstall) puts that bin/ before the shim
// directory (internal/pysandbox/exec.go Exec), so code that drops a counter
// script there (any pip package's post-install, say) answers every later
// subprocess.run(["counter"]) of the Python program instead of the host,
// and the script stays in the venv after the sandbox. Control: the
// planted script runs by its own path.
func TestIPCVenvBinCannotShadowShim(t *testing.T) {
	need(t, "python3")
	venvDir := t.TempDir() + "/venv"
	if r := onHost(t, "python3", "-m", "venv", "--without-pip", venvDir); r.Code != 0 {
		t.Fatalf("python3 -m venv: %s", r)
	}
	r, count := ipcRouter(t)
	sb := newSandbox(t, moat.Config{IPC: r, Isolation: moat.IsolationDefault,
		Python: &moat.PythonConfig{Venv: venvDir, AllowPipInstall: true}})
	prog := `import os, subprocess, sys
b = os.path.join(os.environ["VIRTUAL_ENV"], "bin", "counter")
open(b, "w").write("#!/bin/sh\necho SHADOW\n"); os.chmod(b, 0o755)
print("control:", subprocess.run([b], capture_output=True, text=True).stdout.strip())
print("PATH:", os.environ["PATH"])
print("named:", subprocess.run(["counter"], capture_output=True, text=True).stdout.strip())
`
	before := count()
	res := runCmd(sb.PythonCommand("-c", prog))
	if !strings.Contains(res.Stdout, "control: SHADOW") {
		t.Fatalf("control: the planted script does not run by its path: %s", res)
	}
	if strings.Contains(res.Stdout, "named: SHADOW") || count() != before+1 {
		t.Fatalf("a script the sandbox wrote into the venv answers to the shim's name counter (host calls %d, want %d): %s", count()-before, 1, res)
	}
}

// TestIPCPermissiveHostBinaryNotReplaceable: New must refuse an IPC host
// binary that lies where the sandbox writes (docs/ipc.md; the
// shims run it, and the user runs it again outside). disklimit.Limit.Written
// (internal/disklimit) knows only the working directory, the state and home
// directories and writable grants; at the permissive level the sandbox
// writes nearly the whole home, so a program installed in ~/.local/bin or
// ~/go/bin is accepted, and sandboxed code replaces it by a rename: the
// next time the user starts it, the sandbox's program runs unsandboxed.
// The test copies itself into the home and runs the copy as the host
// program; control: the same rename works on a sibling file.
func TestIPCPermissiveHostBinaryNotReplaceable(t *testing.T) {
	if mode := os.Getenv("ATK_IPC_PERM_CHILD"); mode != "" {
		body := func(t *testing.T) {
			r, _ := ipcRouter(t)
			sb, err := moat.New(moat.Config{IPC: r, Isolation: moat.IsolationPermissive})
			if err != nil {
				fmt.Println("REFUSED:", err)
				return
			}
			defer sb.Close()
			bin, _ := os.Executable()
			bin, _ = filepath.EvalSymlinks(bin)
			res := sh(t, sb, fmt.Sprintf(`B=%q; D=$(dirname "$B"); cp /bin/true "$B.sib" && mv -f "$B.sib" "$B.ctl" && echo CONTROL-OK
cp /bin/true "$B.new" && mv -f "$B.new" "$B" && echo REPLACED-BY-RENAME
mv "$D" "$D.away" && mkdir "$D" && cp /bin/true "$B" && echo REPLACED-BY-PARENT-RENAME`, bin))
			fmt.Print(res.Stdout, res.Stderr)
		}
		if mode == "nons" {
			withoutNamespaces(t, body)
		} else {
			body(t)
		}
		return
	}
	for _, mode := range []string{"namespaces", "nons"} {
		t.Run(mode, func(t *testing.T) { attackPermissiveBinary(t, mode) })
	}
}

func attackPermissiveBinary(t *testing.T, mode string) {
	dir := homeScratch(t)
	copyBin := filepath.Join(dir, "agent")
	copySelf(t, copyBin)
	c := exec.Command(copyBin, "-test.run=^TestIPCPermissiveHostBinaryNotReplaceable$", "-test.count=1", "-test.v")
	c.Env = append(os.Environ(), "ATK_IPC_PERM_CHILD="+mode)
	out, _ := c.CombinedOutput()
	t.Logf("child: %s", out)
	if strings.Contains(string(out), "REFUSED:") {
		return
	}
	if !strings.Contains(string(out), "CONTROL-OK") {
		t.Fatalf("control: the sandbox cannot rename a file beside the binary: %s", out)
	}
	if fi, err := os.Stat(copyBin); err == nil && fi.Size() < 1<<20 {
		t.Fatalf("New accepted a host binary the permissive sandbox could replace, and it did (%d bytes now): %s", fi.Size(), out)
	}
}

// peakRSS resets and reads this process's peak resident memory.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

func peakRSS(t *testing.T) int64 {
	t.Helper()
	st, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := strconv.ParseInt(strings.TrimSuffix(fields(string(st))["VmHWM"], " kB"), 10, 64)
	return kb
}

// TestIPCFrameMemoryBounded: the server promises 64 MiB of frames at a
// time (ipc/budget.go, docs/ipc.md "Transport"), which is what sandboxed code
// can make the host allocate, outside the sandbox's memory limit. The
// budget counts a frame's bytes, but the request is decoded while it is
// held, and a 16 MiB argv of empty strings ("" is 3 bytes of JSON) decodes
// to 5.6 million 16-byte string headers, with the slice's doublings: each
// frame costs the host well over 100 MiB. Eight such frames sent at once
// from the sandbox (a 64 MiB memory limit) must not raise the host's
// peak memory by more than 512 MiB. Control: eight 16 MiB frames of one
// long string, the same bytes through the same budget, stay small.
func TestIPCFrameMemoryBounded(t *testing.T) {
	need(t, "python3")
	r, _ := ipcRouter(t)
	sb := newSandbox(t, moat.Config{IPC: r, Isolation: moat.IsolationDefault, Limits: moat.Limits{MemoryBytes: 256 << 20}})
	prog := `import os, socket, struct, sys, threading
elem = sys.argv[1]
n = (16 << 20) - 64
if elem == "empty":
    body = b'{"v":1,"id":1,"cmd":"counter","argv":[' + b'"",' * ((n - 40) // 3) + b'""]}'
else:
    body = b'{"v":1,"id":1,"cmd":"counter","argv":["' + b'x' * (n - 44) + b'"]}'
frame = struct.pack(">I", len(body)) + body
def one():
    s = socket.socket(socket.AF_UNIX); s.connect(os.environ["MOAT_IPC_ENDPOINT"]); s.sendall(frame)
    s.recv(4096); s.close()
ts = [threading.Thread(target=one) for _ in range(8)]
[t.start() for t in ts]; [t.join() for t in ts]
print("SENT", len(body))
`
	measure := func(elem string) int64 {
		runtime.GC()
		debug.FreeOSMemory()
		resetPeakRSS()
		before := peakRSS(t)
		res := runCmd(sb.Command("python3", "-c", prog, elem))
		if !strings.Contains(res.Stdout, "SENT") {
			t.Fatalf("%s frames were not sent: %s", elem, res)
		}
		return peakRSS(t) - before
	}
	ctl := measure("long")
	atk := measure("empty")
	t.Logf("host peak RSS growth: one long string %d MiB, empty strings %d MiB", ctl>>10, atk>>10)
	if ctl > 512<<10 {
		t.Fatalf("control: 8 frames of one string already raise the host's peak by %d MiB", ctl>>10)
	}
	if atk > 512<<10 {
		t.Fatalf("8 frames of empty argv strings from the sandbox raised the host's peak memory by %d MiB (budget: 64 MiB of frames)", atk>>10)
	}
}

// TestIPCPermissiveShimParentNotRenamed: at the permissive level the IPC
// directory goes in the host's /tmp (internal/ipchost/server.go makeDir), read-only
// there, but with a mount namespace the sandbox's /tmp is its own private
// one, so the shim directory's mount point hangs under directories the
// sandbox made and writes: it renames the parent away and puts a link to
// a directory of its own (executable at permissive) in its place, and
// counter, resolved through the first PATH entry, runs its program. The
// authors' TestIPCShimDirectoryCannotBeMoved tries the default level only.
// Control: the planted program runs by its own path.
func TestIPCPermissiveShimParentNotRenamed(t *testing.T) {
	attackPermissiveShimParent(t)
}

// TestIPCPermissiveShimParentNotRenamedWithoutNamespaces: the same
// attack where Landlock alone guards the IPC directory.
func TestIPCPermissiveShimParentNotRenamedWithoutNamespaces(t *testing.T) {
	withoutNamespaces(t, attackPermissiveShimParent)
}

func attackPermissiveShimParent(t *testing.T) {
	r, count := ipcRouter(t)
	sb := newSandbox(t, moat.Config{IPC: r, Isolation: moat.IsolationPermissive})
	shims := sb.IPCShimDir()
	evil := homeScratch(t)
	before := count()
	res := sh(t, sb, fmt.Sprintf(`S=%q E=%q; mkdir -p "$E/bin" && printf '#!/bin/sh\necho SHADOW\n' > "$E/bin/counter" && chmod +x "$E/bin/counter" && "$E/bin/counter"
p=$(dirname "$S"); while [ "$p" != / ]; do if mv "$p" "$p.away" 2>/dev/null; then echo "MOVED $p"; ln -s "$E" "$p"; break; fi; p=$(dirname "$p"); done
counter`, shims, evil))
	t.Logf("%s", res)
	if !strings.HasPrefix(res.Stdout, "SHADOW\n") {
		t.Fatalf("control: the planted program does not run by its path: %s", res)
	}
	if strings.Count(res.Stdout, "SHADOW") > 1 || count() != before+1 {
		t.Fatalf("after renaming a parent of the shim directory away, counter runs the sandbox's program (host calls %d, want 1): %s", count()-before, res)
	}
}

// copySelf copies this test binary to path (0755).
func copySelf(t *testing.T, path string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestIPCBinaryParentInPrivateTmpNotRenamed: a host program started from
// a directory of the host's /tmp (go run builds into /tmp/go-build*/…/exe/)
// is accepted (the host's /tmp is no place the sandbox writes), but with
// a mount namespace its bind's mount point is made inside the sandbox's
// private /tmp, under directories the sandbox may rename. In build mode
// the sandbox renames the top one away and links a directory of its
// working directory in its place: every shim's `exec BIN` then runs the
// sandbox's program. Without build mode it links the binary's name to
// any program it may run (/bin/echo here), which gets the caller's
// arguments. Control: that program runs by its own path.
func TestIPCBinaryParentInPrivateTmpNotRenamed(t *testing.T) {
	if mode := os.Getenv("ATK_IPC_TMPBIN_CHILD"); mode != "" {
		r, count := ipcRouter(t)
		sb := newSandbox(t, moat.Config{IPC: r, Isolation: moat.IsolationDefault, Build: mode == "build"})
		bin, _ := os.Executable()
		bin, _ = filepath.EvalSymlinks(bin)
		top := "/tmp/" + strings.Split(strings.TrimPrefix(bin, "/tmp/"), "/")[0]
		rel := strings.TrimPrefix(bin, top)
		// build: link the top to the working directory, which runs;
		// default: nothing written runs, so point the binary's name at
		// a system program instead, which takes the caller's arguments.
		plant := `mkdir -p "fake$(dirname "$R")" && printf '#!/bin/sh\necho SHADOW\n' > "fake$R" && chmod +x "fake$R" && "./fake$R"
mv "$T" "$T.away" && echo MOVED && ln -s "$PWD/fake" "$T"`
		if mode != "build" {
			plant = `/bin/echo SHADOW
mv "$T" "$T.away" && echo MOVED && mkdir -p "$T$(dirname "$R")" && ln -s /bin/echo "$T$R"`
		}
		before := count()
		res := sh(t, sb, fmt.Sprintf("T=%q R=%q; %s\ncounter", top, rel, plant))
		fmt.Printf("%s\nHOSTCALLS=%d\n", res, count()-before)
		return
	}
	for _, mode := range []string{"build", "default"} {
		t.Run(mode, func(t *testing.T) { attackTmpBinary(t, mode) })
	}
}

func attackTmpBinary(t *testing.T, mode string) {
	dir, err := os.MkdirTemp("/tmp", "atk-ipc-bin-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.MkdirAll(filepath.Join(dir, "b001", "exe"), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "b001", "exe", "agent")
	copySelf(t, bin)
	c := exec.Command(bin, "-test.run=^TestIPCBinaryParentInPrivateTmpNotRenamed$", "-test.count=1", "-test.v")
	c.Env = append(os.Environ(), "ATK_IPC_TMPBIN_CHILD="+mode)
	out, _ := c.CombinedOutput()
	s := string(out)
	t.Logf("child: %s", s)
	if !strings.Contains(s, "stdout:\nSHADOW\n") {
		t.Fatalf("control: the planted program does not run by its path")
	}
	if strings.Count(s, "SHADOW") > 1 || !strings.Contains(s, "HOSTCALLS=1") {
		t.Fatalf("after renaming the binary's /tmp parent inside the sandbox, counter runs the sandbox's program instead of reaching the host")
	}
}

// homeScratch makes a 0755 directory in ~/.local/share (a place the
// permissive level writes and executes; a 0700 one would be protected)
// and removes it, and the parents it had to make, when the test ends.
func homeScratch(t *testing.T) string {
	t.Helper()
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	var made []string
	for _, d := range []string{filepath.Join(home, ".local"), filepath.Join(home, ".local", "share")} {
		if err := os.Mkdir(d, 0o755); err == nil {
			made = append(made, d)
		} else if !os.IsExist(err) {
			t.Fatal(err)
		}
	}
	dir, err := os.MkdirTemp(filepath.Join(home, ".local", "share"), "atk-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.RemoveAll(dir)
		os.RemoveAll(dir + ".away")
		for i := len(made) - 1; i >= 0; i-- {
			os.Remove(made[i])
		}
	})
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
