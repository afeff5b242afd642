//go:build linux

package escape_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/policy"
)

// The environment, agent-socket and network fields of policy documents
// (issue 14), attacked through the path moat exec takes: a document,
// Document.Exec with this process's environment, moat.New, the command in
// the cwd. Each case has a positive control with the field lifted.

// runDocument runs doc as moat exec would, in cwd, and returns what the
// command printed; a policy or sandbox error is code 2.
func runDocument(t *testing.T, doc map[string]any, cwd string) result {
	t.Helper()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	d, err := policy.ParseDocument(b)
	if err != nil {
		t.Fatalf("policy: %v\n%s", err, b)
	}
	x, err := d.Exec(policy.ExecHost{Environ: os.Environ(), Dir: cwd})
	if err != nil {
		return result{Code: 2, Err: err, Stderr: err.Error()}
	}
	defer x.Close()
	sb, err := moat.New(x.Config)
	if err != nil {
		return result{Code: 2, Err: err, Stderr: err.Error()}
	}
	defer sb.Close()
	c := sb.Command(x.Command[0], x.Command[1:]...)
	c.Dir = x.Dir
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err = c.Run()
	return toResult(out.String(), errb.String(), err)
}

// docCwd is a fresh cwd for a document.
func docCwd(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestPolicyDocEnvironment: a host secret in the environment reaches the
// command only when the policy lets it through: not with the default
// empty allowlist, not when denied (deny overrides allow), not in
// blocklist mode when denied, and not through any /proc/*/environ the
// sandbox can read. The control allows it and sees it.
func TestPolicyDocEnvironment(t *testing.T) {
	t.Setenv("MOAT_ESC_SECRET", "s3cret-value")
	t.Setenv("MOAT_ESC_PLAIN", "plain")
	script := `printf '%s:%s|' "${MOAT_ESC_SECRET-unset}" "${MOAT_ESC_PLAIN-unset}"; cat /proc/*/environ 2>/dev/null | tr '\0' '\n' | grep -c s3cret-value || true`
	cwd := docCwd(t)
	for _, tt := range []struct {
		name string
		env  map[string]any
		want string
	}{
		{"empty allowlist", nil, "unset:unset|0\n"},
		{"allowlist", map[string]any{"allow": []string{"MOAT_ESC_PLAIN"}}, "unset:plain|0\n"},
		{"deny overrides allow", map[string]any{"allow": []string{"MOAT_ESC_SECRET", "MOAT_ESC_PLAIN"}, "deny": []string{"MOAT_ESC_SECRET"}}, "unset:plain|0\n"},
		{"blocklist", map[string]any{"deny": []string{"MOAT_ESC_SECRET"}}, "unset:plain|0\n"},
		{"control: allowed", map[string]any{"allow": []string{"MOAT_ESC_SECRET", "MOAT_ESC_PLAIN"}}, "s3cret-value:plain|"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc := map[string]any{"command": []string{"sh", "-c", script}}
			if tt.env != nil {
				doc["env"] = tt.env
			}
			r := runDocument(t, doc, cwd)
			// The control's count is at least its own process's.
			if r.Code != 0 || !strings.HasPrefix(r.Stdout, tt.want) {
				t.Fatalf("want %q: %s", tt.want, r)
			}
		})
	}
}

// TestPolicyDocAgentSocket: an agent socket on the host is connectable
// only with the opt-in. Without it, even a grant that makes the socket's
// directory visible does not let the command connect (the socket guard);
// with it, the command connects and SSH_AUTH_SOCK names the socket. The
// host connects either way.
func TestPolicyDocAgentSocket(t *testing.T) {
	need(t, "python3")
	dir := docCwd(t)
	sock := filepath.Join(dir, "agent.sock")
	serveUnixLine(t, sock, "agent") // pastplace_link_linux_test.go
	t.Setenv("SSH_AUTH_SOCK", sock)
	program := fmt.Sprintf(`
import os, socket
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(%q)
    print("connected", s.recv(16).decode().strip(), os.environ.get("SSH_AUTH_SOCK", "unset"))
except OSError as e:
    print("refused", e.errno, os.environ.get("SSH_AUTH_SOCK", "unset"))
`, sock)
	if r := hostPython(t, program); !strings.HasPrefix(r.Stdout, "connected agent") {
		t.Fatalf("control: the host cannot connect to its own agent socket: %s", r)
	}
	cwd := docCwd(t)
	for _, tt := range []struct {
		name string
		doc  map[string]any
		want string
	}{
		{"no opt-in, socket's directory granted", map[string]any{"grants": map[string]string{dir: "r"}}, "refused 13 unset"},
		{"no opt-in", map[string]any{}, "refused"},
		{"control: sshAgent", map[string]any{"sshAgent": true}, "connected agent " + sock},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.doc["command"] = []string{"python3", "-c", program}
			r := runDocument(t, tt.doc, cwd)
			if r.Code != 0 || !strings.HasPrefix(r.Stdout, tt.want) {
				t.Fatalf("want %q: %s", tt.want, r)
			}
		})
	}
}

// TestPolicyDocNetwork: with "network": "none" (and with no network field
// at all) a server on the host's loopback is unreachable; the control,
// "network": "host", reaches it.
func TestPolicyDocNetwork(t *testing.T) {
	need(t, "python3")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("hello\n"))
			c.Close()
		}
	}()
	program := fmt.Sprintf(`
import socket
try:
    s = socket.create_connection(("127.0.0.1", %d), timeout=5)
    print("connected", s.recv(16).decode().strip())
except OSError as e:
    print("refused", e.errno)
`, ln.Addr().(*net.TCPAddr).Port)
	cwd := docCwd(t)
	for _, tt := range []struct {
		name, network, want string
	}{
		{"default", "", "refused"},
		{"none", "none", "refused"},
		{"control: host", "host", "connected hello"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc := map[string]any{"command": []string{"python3", "-c", program}}
			if tt.network != "" {
				doc["network"] = tt.network
			}
			r := runDocument(t, doc, cwd)
			if r.Code != 0 || !strings.HasPrefix(r.Stdout, tt.want) {
				t.Fatalf("want %q: %s", tt.want, r)
			}
		})
	}
}
