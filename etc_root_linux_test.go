package moat_test

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/moattest"
)

// A sandbox run as root (capabilities dropped, still the owner of /etc)
// cannot read any /etc entry whose mode withholds read from others,
// whatever its name and however deep, with and without namespaces, at
// strict and default. Controls: the same names with o+r are read by the
// same sandbox, and the host reads every secret with the same probe.
//
// It attacks the sandbox, yet stays here rather than in test/escape on
// purpose: the guarantee is about a sandbox run by root, the package tests
// run as root (./test.sh, CI), and the escape battery refuses root. The
// cases without namespaces run in a child process that really cannot
// create them (moattest.WithoutUserNamespaces: clone and unshare with
// CLONE_NEWUSER refused, clone3 answered ENOSYS, as Docker's profile does).
func TestEtcPrivateHiddenAsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIPPED, NOT PASSED: TestEtcPrivateHiddenAsRoot needs root (it plants files in /etc); run the root package tests as root")
	}
	b := make([]byte, 4)
	rand.Read(b)
	tag := hex.EncodeToString(b)
	type plant struct {
		path, content string
		mode          os.FileMode
		secret        bool
	}
	top := "/etc/moat-test-secret-" + tag
	dir := "/etc/moat-test-dir-" + tag
	closed := "/etc/moat-test-closed-" + tag
	plants := []plant{
		{top, "ETC-SECRET-TOP-" + tag, 0o640, true},
		{"/etc/moat-test-open-" + tag, "ETC-OPEN-TOP-" + tag, 0o644, false},
		{dir + "/a/b/key.pem", "ETC-SECRET-DEEP-" + tag, 0o600, true},
		{dir + "/a/b/ca.pem", "ETC-OPEN-DEEP-" + tag, 0o644, false},
		{dir + "/a/passwd.client", "ETC-SECRET-MID-" + tag, 0o400, true},
		{closed + "/readable-inside", "ETC-SECRET-CLOSEDDIR-" + tag, 0o644, true},
	}
	t.Cleanup(func() {
		os.Remove(top)
		os.Remove("/etc/moat-test-open-" + tag)
		os.RemoveAll(dir)
		os.RemoveAll(closed)
	})
	for _, p := range plants {
		if err := os.MkdirAll(filepath.Dir(p.path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p.path, []byte(p.content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p.path, p.mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(closed, 0o700); err != nil { // a directory others cannot enter
		t.Fatal(err)
	}
	var probe strings.Builder
	for _, p := range plants {
		probe.WriteString("cat " + p.path + " 2>/dev/null; echo; ")
	}
	// /etc/ssl/private holds the host's TLS keys where it exists.
	var sslKeys []string
	if ents, err := os.ReadDir("/etc/ssl/private"); err == nil {
		for _, e := range ents {
			if e.Type().IsRegular() {
				p := filepath.Join("/etc/ssl/private", e.Name())
				sslKeys = append(sslKeys, p)
				probe.WriteString("head -c 64 " + p + " >/dev/null 2>&1 && echo SSL-KEY-READ-" + e.Name() + "; ")
			}
		}
	}
	host, _ := hostRun("sh", "-c", probe.String())
	for _, p := range plants {
		if !strings.Contains(host, p.content) {
			t.Fatalf("control: the host cannot read %s, so the probe proves nothing: %s", p.path, host)
		}
	}
	for _, k := range sslKeys {
		if !strings.Contains(host, "SSL-KEY-READ-"+filepath.Base(k)) {
			t.Fatalf("control: the host cannot read %s: %s", k, host)
		}
	}
	for _, level := range []moat.Isolation{moat.IsolationStrict, moat.IsolationDefault} {
		for _, ns := range []bool{true, false} {
			name := level.String() + "/namespaces"
			if !ns {
				name = level.String() + "/no-namespaces"
			}
			probeSandbox := func(t *testing.T) {
				sb := newSandbox(t, moat.Config{Isolation: level})
				out, err := sb.Command("sh", "-c", probe.String()).CombinedOutput()
				if got := sb.Report().Active("namespaces"); got != ns {
					t.Fatalf("namespaces active = %v, want %v (the probe: %v: %s):\n%s", got, ns, err, out, sb.Report())
				}
				for _, p := range plants {
					got := strings.Contains(string(out), p.content)
					switch {
					case p.secret && got:
						t.Errorf("%s (mode %v) was read by a root sandbox", p.path, p.mode)
					case !p.secret && !got:
						t.Errorf("control: %s (mode %v) was not read, so the denials may not come from the mode", p.path, p.mode)
					}
				}
				for _, k := range sslKeys {
					if strings.Contains(string(out), "SSL-KEY-READ-"+filepath.Base(k)) {
						t.Errorf("%s was read by a root sandbox", k)
					}
				}
				if t.Failed() {
					t.Logf("probe output: %s", out)
				}
			}
			t.Run(name, func(t *testing.T) {
				if ns {
					probeSandbox(t)
					return
				}
				// A host that really refuses user namespaces; moat meets
				// the refusal at the first command and runs without.
				moattest.WithoutUserNamespaces(t, probeSandbox)
			})
		}
	}
}
