package moat_test

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

// Without namespaces (hosts that refuse them), Landlock and seccomp still
// hold. Each probe here is attacked for real with namespaces switched off,
// with the same probe on the host as its control.
func TestWithoutNamespacesLandlockAndSeccompHold(t *testing.T) {
	sb := newSandbox(t, moat.Config{})
	moat.DisableNamespaces(sb)
	if sb.Report().Active("namespaces") || len(sb.Report().Gaps) == 0 {
		t.Fatalf("report does not show the fallback:\n%s", sb.Report())
	}
	secretDir := t.TempDir()
	secret := filepath.Join(secretDir, "secret")
	os.WriteFile(secret, []byte("FALLBACK-SECRET"), 0o644)
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
			c.Write([]byte("pong"))
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	connect := `python3 -c "import socket,sys; s=socket.create_connection(('127.0.0.1',int(sys.argv[1])),timeout=3); print(s.recv(4).decode())" ` + itoa(port)
	cases := []struct {
		name, script, leak string
	}{
		{"read a file outside", "cat " + secret, "FALLBACK-SECRET"},
		{"write outside", "echo x > " + secretDir + "/w && echo WROTE", "WROTE"},
		{"shared temp", "echo x > /tmp/moat-fallback-$$ && echo WROTE && rm -f /tmp/moat-fallback-$$", "WROTE"},
		{"run what was written", "cp /bin/echo ./e && ./e RAN", "RAN"},
		{"tcp to a host listener", connect, "pong"},
		{"udp socket", `python3 -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM); print('UDP-OK')"`, "UDP-OK"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, _ := sb.Command("sh", "-c", tc.script).CombinedOutput()
			if strings.Contains(string(out), tc.leak) {
				t.Fatalf("without namespaces the sandbox got through: %s", out)
			}
			host, _ := hostRun("sh", "-c", "cd "+t.TempDir()+" && "+tc.script)
			if !strings.Contains(host, tc.leak) {
				t.Fatalf("control: the probe fails on the host too: %s", host)
			}
		})
	}
	os.Remove("/tmp/moat-fallback-" + itoa(os.Getpid()))
	// Ordinary work still runs, and a command's background job dies with it.
	out, err := sb.Command("sh", "-c", "echo ok > f && cat f").Output()
	if err != nil || string(out) != "ok\n" {
		t.Fatalf("ordinary command: %q, %v", out, err)
	}
}

// A granted directory swapped for a link between configuration and start
// cannot move the grant: the sandbox refuses to start with
// ErrGrantRedirected, with and without namespaces. The control runs the
// same read without the swap.
func TestGrantSwappedForLinkBeforeStart(t *testing.T) {
	for _, withNS := range []bool{true, false} {
		name := "namespaces"
		if !withNS {
			name = "landlock only"
		}
		t.Run(name, func(t *testing.T) {
			base, _ := filepath.EvalSymlinks(t.TempDir())
			granted := filepath.Join(base, "granted")
			secretDir := filepath.Join(base, "secret")
			os.Mkdir(granted, 0o755)
			os.Mkdir(secretDir, 0o755)
			os.WriteFile(filepath.Join(granted, "f"), []byte("GRANTED"), 0o644)
			os.WriteFile(filepath.Join(secretDir, "f"), []byte("SWAPPED-SECRET"), 0o644)

			newSB := func() *moat.Sandbox {
				sb := newSandbox(t, moat.Config{Grants: []moat.Grant{{Path: granted, Access: moat.READ}}})
				if !withNS {
					moat.DisableNamespaces(sb)
				}
				return sb
			}
			// Control: without the swap the grant works.
			out, err := newSB().Command("cat", filepath.Join(granted, "f")).Output()
			if err != nil || string(out) != "GRANTED" {
				t.Fatalf("control: %q, %v", out, err)
			}
			sb := newSB()
			if err := os.Rename(granted, granted+".orig"); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(secretDir, granted); err != nil {
				t.Fatal(err)
			}
			out, err = sb.Command("cat", filepath.Join(granted, "f")).CombinedOutput()
			if strings.Contains(string(out), "SWAPPED-SECRET") {
				t.Fatalf("the swapped link moved the grant: %s", out)
			}
			if !errors.Is(err, moat.ErrGrantRedirected) {
				t.Fatalf("err = %v, want ErrGrantRedirected (output %q)", err, out)
			}
		})
	}
}
