//go:build linux

package escape_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/ipc"
)

// Typed IPC's promises (Config.IPC): the sandbox cannot add, change or
// replace a shim, cannot shadow one through PATH from a place it writes,
// and cannot take the socket away; another sandbox cannot reach it.

// ipcRouter registers counter, whose handler counts its calls here.
func ipcRouter(t *testing.T) (*ipc.Router, func() int) {
	t.Helper()
	var mu sync.Mutex
	n := 0
	r := ipc.NewRouter()
	if err := ipc.Register(r, "counter", func(context.Context, struct{}, ipc.Call) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		n++
		return fmt.Sprintf("host-count=%d\n", n), nil
	}); err != nil {
		t.Fatal(err)
	}
	return r, func() int { mu.Lock(); defer mu.Unlock(); return n }
}

// shimAttacks try to change the shim directory; each must fail, and the
// same operation must succeed in the working directory (the control).
var shimAttacks = []struct {
	name, script string
}{
	{"create a new shim", `printf '#!/bin/sh\necho evil\n' > "$D/evil" && chmod +x "$D/evil"`},
	{"overwrite a shim", `printf '#!/bin/sh\necho evil\n' > "$D/counter"`},
	{"append to a shim", `echo 'echo evil' >> "$D/counter"`},
	{"make a shim writable, then write it", `chmod u+w "$D/counter" && echo 'echo evil' >> "$D/counter"`},
	{"remove a shim", `rm -f "$D/counter" && ! test -e "$D/counter"`},
	{"rename a shim", `mv "$D/counter" "$D/counter.old"`},
	{"replace a shim by a link", `ln -sf /bin/true "$D/counter.new" && mv -f "$D/counter.new" "$D/counter"`},
	{"hard-link a shim into the working directory, then write it", `ln "$D/counter" "$W/linked" && chmod u+w "$W/linked" && echo 'echo evil' >> "$W/linked"`},
	{"remove the socket", `rm -f "$S" && ! test -e "$S"`},
	{"rename the socket", `mv "$S" "$S.old"`},
}

// attackShims runs every shim attack in sb, where it must fail and leave
// counter reaching the host, and in a copy made in the working directory,
// where it must succeed.
func attackShims(t *testing.T, sb *moat.Sandbox, count func() int) {
	t.Helper()
	shims, sock := sb.IPCShimDir(), sb.IPCEndpoint()
	if shims == "" || sock == "" {
		t.Fatal("the sandbox has no IPC shims or socket")
	}
	for _, a := range shimAttacks {
		t.Run(a.name, func(t *testing.T) {
			setup := fmt.Sprintf("D=%q S=%q W=\"$PWD\"; ", shims, sock)
			r := sh(t, sb, setup+a.script+` && echo ATTACK-WORKED`)
			mustNotContain(t, r, "ATTACK-WORKED")
			before := count()
			r = sh(t, sb, "counter")
			if r.Code != 0 || !strings.HasPrefix(r.Stdout, "host-count=") || count() != before+1 {
				t.Fatalf("after the attack counter does not reach the host: %s", r)
			}
			// Control: the same operation on a copy in the working directory.
			control := `mkdir -p ctl && cp "$D/counter" ctl/counter && chmod 700 ctl/counter && python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' ctl/s && D="$PWD/ctl" S="$PWD/ctl/s"; `
			r = sh(t, sb, setup+control+a.script+` && echo ATTACK-WORKED; rm -rf ctl linked`)
			mustContain(t, r, "ATTACK-WORKED")
		})
	}
}

// TestIPCShimsCannotBeChanged: with namespaces the shim directory is a
// read-only bind and the socket a granted file.
func TestIPCShimsCannotBeChanged(t *testing.T) {
	need(t, "python3")
	for _, iso := range []moat.Isolation{moat.IsolationStrict, moat.IsolationDefault, moat.IsolationPermissive} {
		t.Run(iso.String(), func(t *testing.T) {
			r, count := ipcRouter(t)
			sb := newSandbox(t, moat.Config{IPC: r, Isolation: iso})
			attackShims(t, sb, count)
		})
	}
}

// TestIPCShimsWithoutNamespaces: without namespaces the shims are a host
// directory the sandbox may read and execute (Landlock) but not write.
func TestIPCShimsWithoutNamespaces(t *testing.T) {
	need(t, "python3")
	withoutNamespaces(t, func(t *testing.T) {
		r, count := ipcRouter(t)
		sb := newSandbox(t, moat.Config{IPC: r, Isolation: moat.IsolationDefault})
		if sb.Report().Active("namespaces") {
			t.Fatal("the sandbox uses namespaces")
		}
		attackShims(t, sb, count)
	})
}

// TestIPCShimsCannotBeShadowed: the shim directory is first on PATH, so a
// program the sandbox writes under a shim's name, in build mode where it
// could run, is never what the name runs; nor is one written where the
// shim directory seemed to be after its parent is renamed away.
func TestIPCShimsCannotBeShadowed(t *testing.T) {
	r, count := ipcRouter(t)
	sb := newSandbox(t, moat.Config{IPC: r, Isolation: moat.IsolationDefault, Build: true})
	shims := sb.IPCShimDir()
	path := sh(t, sb, `printf %s "$PATH"`).Stdout
	if first, _, _ := strings.Cut(path, ":"); first != shims {
		t.Fatalf("PATH is %q, want the shim directory %q first", path, shims)
	}
	plant := `printf '#!/bin/sh\necho SHADOW\n' > counter && chmod +x counter; for d in $(echo "$PATH" | tr ':' ' '); do cp counter "$d/counter" 2>/dev/null; done; `
	// Control: the planted program runs when named by its path (build mode).
	mustContain(t, sh(t, sb, plant+"./counter"), "SHADOW")
	before := count()
	res := sh(t, sb, plant+"counter; command -v counter")
	mustNotContain(t, res, "SHADOW")
	if !strings.HasPrefix(res.Stdout, "host-count=") || count() != before+1 || !strings.Contains(res.Stdout, filepath.Join(shims, "counter")) {
		t.Fatalf("counter does not resolve to its shim: %s", res)
	}
}

// TestIPCShimDirectoryCannotBeMoved: nor can the sandbox move the shim
// directory, or any directory above it, out of the way and put a
// directory of its own, or a link to one it may execute (the working
// directory, in build mode), where it was. Each ancestor is tried in a
// fresh sandbox; the planted program runs by its own path (the control).
func TestIPCShimDirectoryCannotBeMoved(t *testing.T) {
	for _, how := range []string{"a directory", "a link into the working directory"} {
		t.Run(how, func(t *testing.T) {
			r, count := ipcRouter(t)
			sb := newSandbox(t, moat.Config{IPC: r, Isolation: moat.IsolationDefault, Build: true})
			shims := sb.IPCShimDir()
			replace := `mkdir -p "$p"`
			if how != "a directory" {
				replace = `ln -s "$PWD/fake$p" "$p"`
			}
			before := count()
			res := sh(t, sb, fmt.Sprintf(`S=%q; mkdir -p "fake$S" && printf '#!/bin/sh\necho SHADOW\n' > "fake$S/counter" && chmod +x "fake$S/counter" && "./fake$S/counter"
p="$S"; while [ "$p" != / ]; do if mv "$p" "$p.away" 2>/dev/null; then echo "MOVED $p"; %s; cp "fake$S/counter" "$S/counter" 2>/dev/null; fi; p=$(dirname "$p"); done
counter`, shims, replace))
			if strings.Count(res.Stdout, "SHADOW") != 1 {
				t.Fatalf("a program the sandbox wrote runs as counter (or the control did not run): %s", res)
			}
			mustNotContain(t, res, "MOVED")
			// Control: the same move works on a directory of the
			// sandbox's /tmp, where the shims lay before they moved out.
			mustContain(t, sh(t, sb, `mkdir -p /tmp/a/bin && mv /tmp/a /tmp/a.away && echo MOVED`), "MOVED")
			if !strings.Contains(res.Stdout, "host-count=") || count() != before+1 {
				t.Fatalf("counter does not reach the host: %s", res)
			}
		})
	}
}

// TestIPCSocketNotReachableFromAnotherSandbox: a sandbox without IPC
// cannot connect to another sandbox's socket, not even by its path; the
// sandbox it belongs to can (the control).
func TestIPCSocketNotReachableFromAnotherSandbox(t *testing.T) {
	need(t, "python3")
	r, _ := ipcRouter(t)
	owner := newSandbox(t, moat.Config{IPC: r, Isolation: moat.IsolationDefault})
	other := newSandbox(t, moat.Config{Isolation: moat.IsolationDefault})
	if !other.Report().Active("unix-sockets") {
		t.Fatal("SKIPPED would hide a gap: the socket guard is not active here")
	}
	probe := fmt.Sprintf(`import socket
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(%q); print("connected")
except OSError as e:
    print("refused", e.errno)
`, owner.IPCEndpoint())
	if r := python(t, owner, probe); strings.TrimSpace(r.Stdout) != "connected" {
		t.Fatalf("control: the owning sandbox cannot connect: %s", r)
	}
	if r := python(t, other, probe); !strings.HasPrefix(strings.TrimSpace(r.Stdout), "refused") {
		t.Fatalf("another sandbox reached the socket: %s", r)
	}
}
