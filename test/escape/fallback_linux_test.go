//go:build linux

package escape_test

// Hosts that refuse user namespaces (a container under Docker's default
// seccomp profile, a kernel with them switched off): moat falls back to
// Landlock and seccomp alone. Every test here runs in a child process that
// really cannot create a user namespace (withoutNamespaces), and attacks
// what must still hold there; each probe's control is the same probe on
// the host.

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/moattest"
)

// Without namespaces, Landlock and seccomp still keep the sandbox from
// reading or writing outside, writing shared temp, running what it wrote,
// connecting to a host listener and opening a UDP socket; ordinary work
// still runs.
func TestWithoutNamespacesLandlockAndSeccompHold(t *testing.T) {
	withoutNamespaces(t, func(t *testing.T) {
		need(t, "python3")
		sb := newSandbox(t, moat.Config{})
		if rep := sb.Report(); rep.Active("namespaces") || len(rep.Gaps) == 0 {
			t.Fatalf("report does not show the fallback:\n%s", rep)
		}
		secretDir := t.TempDir()
		secret := filepath.Join(secretDir, "secret")
		if err := moattest.WriteFile(secret, []byte("FALLBACK-SECRET"), 0o644); err != nil {
			t.Fatal(err)
		}
		port, _ := pongServer(t, "tcp", "127.0.0.1:0")
		connect := `python3 -c "import socket,sys; s=socket.create_connection(('127.0.0.1',int(sys.argv[1])),timeout=3); print(s.recv(4).decode())" ` + strconv.Itoa(port)
		shared := "/tmp/moat-fallback-" + randomHex(6)
		t.Cleanup(func() { os.Remove(shared) })
		cases := []struct {
			name, script, leak string
		}{
			{"read a file outside", "cat " + secret, "FALLBACK-SECRET"},
			{"write outside", "echo x > " + secretDir + "/w && echo WROTE", "WROTE"},
			{"shared temp", "echo x > " + shared + " && echo WROTE && rm -f " + shared, "WROTE"},
			{"run what was written", "cp /bin/echo ./e && ./e RAN", "RAN"},
			{"tcp to a host listener", connect, "pong"},
			{"udp socket", `python3 -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM); print('UDP-OK')"`, "UDP-OK"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				mustNotContain(t, sh(t, sb, tc.script), tc.leak)
				mustContain(t, hostSh(t, "cd "+t.TempDir()+" && "+tc.script), tc.leak)
			})
		}
		if r := sh(t, sb, "echo ok > f && cat f"); r.Code != 0 || r.Stdout != "ok\n" {
			t.Fatalf("ordinary command: %s", r)
		}
	})
}

// A granted directory swapped for a link between configuration and start
// cannot move the grant: the sandbox refuses to start with
// ErrGrantRedirected, with namespaces and without. The control runs the
// same read without the swap.
func TestGrantSwappedForLinkBeforeStart(t *testing.T) {
	attack := func(t *testing.T) {
		base, _ := filepath.EvalSymlinks(t.TempDir())
		granted := filepath.Join(base, "granted")
		secretDir := filepath.Join(base, "secret")
		for _, d := range []string{granted, secretDir} {
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		writeFile(t, filepath.Join(granted, "f"), "GRANTED")
		writeFile(t, filepath.Join(secretDir, "f"), "SWAPPED-SECRET")
		cfg := moat.Config{Grants: []moat.Grant{{Path: granted, Access: moat.READ}}}
		// Control: without the swap the grant works.
		if r := inSandbox(t, newSandbox(t, cfg), "cat", filepath.Join(granted, "f")); r.Code != 0 || r.Stdout != "GRANTED" {
			t.Fatalf("control: %s", r)
		}
		sb := newSandbox(t, cfg)
		if err := os.Rename(granted, granted+".orig"); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(secretDir, granted); err != nil {
			t.Fatal(err)
		}
		out, err := sb.Command("cat", filepath.Join(granted, "f")).CombinedOutput()
		if strings.Contains(string(out), "SWAPPED-SECRET") {
			t.Fatalf("the swapped link moved the grant: %s", out)
		}
		if !errors.Is(err, moat.ErrGrantRedirected) {
			t.Fatalf("err = %v, want ErrGrantRedirected (output %q)", err, out)
		}
	}
	t.Run("namespaces", attack)
	t.Run("landlock only", func(t *testing.T) { withoutNamespaces(t, attack) })
}

// Without namespaces nothing can be masked: Landlock rules carved around
// the protected paths are what hold. Each case reads a decoy in a planted
// home; the control reads a file next to it through the same sandbox.
func TestWithoutNamespacesProtectionsHold(t *testing.T) {
	withoutNamespaces(t, func(t *testing.T) {
		home := filepath.Join(t.TempDir(), "home")
		t.Setenv("HOME", home)
		plantFile := func(rel, content string) string {
			p := filepath.Join(home, rel)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := moattest.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}
		sshKey := plantFile(".ssh/id_ed25519", "FALLBACK-SSH-KEY")
		awsCreds := plantFile(".aws/credentials", "FALLBACK-AWS")
		keyring := plantFile(".local/share/keyrings/login.keyring", "FALLBACK-KEYRING")
		notes := plantFile("notes.txt", "PLAIN-NOTES")
		userSite := plantFile(".local/lib/site.py", "USER-SITE")
		project := plantFile("proj2/.env", "OTHER-PROJECT")
		home, _ = filepath.EvalSymlinks(home)

		type probe struct {
			path string
			want bool // readable
		}
		tests := []struct {
			name   string
			cfg    moat.Config
			probes []probe
		}{
			{"permissive", moat.Config{Isolation: moat.IsolationPermissive},
				[]probe{{sshKey, false}, {awsCreds, false}, {keyring, false}, {notes, true}, {project, true}}},
			{"default", moat.Config{Isolation: moat.IsolationDefault},
				[]probe{{sshKey, false}, {keyring, false}, {notes, false}, {project, false}, {userSite, true}}},
			{"grant of the home", moat.Config{Grants: []moat.Grant{{Path: home, Access: moat.READ}}},
				[]probe{{sshKey, false}, {awsCreds, false}, {notes, true}}},
			{"explicit grant beats protection", moat.Config{Grants: []moat.Grant{{Path: home + "/.ssh", Access: moat.READ}}},
				[]probe{{sshKey, true}, {awsCreds, false}}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				sb := newSandbox(t, tt.cfg)
				if sb.Report().Active("namespaces") {
					t.Fatal("namespaces still on")
				}
				for _, p := range tt.probes {
					out, _ := sb.Command("cat", p.path).CombinedOutput()
					content, _ := os.ReadFile(p.path)
					if got := strings.Contains(string(out), string(content)); got != p.want {
						t.Errorf("cat %s: readable=%v, want %v (%s)", p.path, got, p.want, out)
					}
				}
			})
		}

		t.Run("protected file created after start", func(t *testing.T) {
			sb := newSandbox(t, moat.Config{Isolation: moat.IsolationPermissive})
			if out, err := sb.Command("cat", notes).CombinedOutput(); err != nil || !strings.Contains(string(out), "PLAIN-NOTES") {
				t.Fatalf("control: first command cannot read notes: %v %s", err, out)
			}
			netrc := plantFile(".netrc", "machine x password LATE-SECRET")
			defer os.Remove(netrc)
			if out, _ := sb.Command("cat", netrc).CombinedOutput(); strings.Contains(string(out), "LATE-SECRET") {
				t.Fatalf("a .netrc created after start was read: %s", out)
			}
		})

		t.Run("permissive does not execute from shared temp", func(t *testing.T) {
			sb := newSandbox(t, moat.Config{Isolation: moat.IsolationPermissive})
			// The host's shared temp is never written; the private temp,
			// TMPDIR at its host path here, is written and never executed.
			shared := "/var/tmp/moat-fallback-exec-" + randomHex(6) + ".sh"
			defer os.Remove(shared)
			sb.Command("sh", "-c", "echo x > "+shared).Run()
			if _, err := os.Stat(shared); err == nil {
				t.Fatalf("permissive without namespaces wrote the host's shared temp")
			}
			tmp, err := sb.Command("sh", "-c", `printf '%s' "$TMPDIR"`).Output()
			if err != nil || !filepath.IsAbs(string(tmp)) || string(tmp) == "/tmp" {
				t.Fatalf("TMPDIR should be the private temp's host path: %q %v", tmp, err)
			}
			script := filepath.Join(string(tmp), "exec.sh")
			out, _ := sb.Command("sh", "-c", "printf '#!/bin/sh\\necho EXECUTED\\n' > "+script+" && chmod +x "+script+" && "+script).CombinedOutput()
			if strings.Contains(string(out), "EXECUTED") {
				t.Fatalf("ran a program written to the private temp: %s", out)
			}
			if _, err := os.Stat(script); err != nil {
				t.Fatalf("control: writing the private temp failed: %v (%s)", err, out)
			}
			mustContain(t, onHost(t, script), "EXECUTED")
		})

		t.Run("link planted in shared temp at default", func(t *testing.T) {
			// Outside shared temp and the home: only the link leads there.
			secretDir := t.TempDir()
			writeFile(t, filepath.Join(secretDir, "secret.txt"), "LINKED-SECRET")
			link := "/tmp/fallback-link-" + randomHex(6)
			if err := os.Symlink(secretDir, link); err != nil {
				t.Fatal(err)
			}
			defer os.Remove(link)
			sb := newSandbox(t, moat.Config{Isolation: moat.IsolationDefault})
			mustNotContain(t, inSandbox(t, sb, "cat", link+"/secret.txt"), "LINKED-SECRET")
			mustContain(t, onHost(t, "cat", link+"/secret.txt"), "LINKED-SECRET")
		})

		t.Run("control paths need a mount namespace", func(t *testing.T) {
			sb := newSandbox(t, moat.Config{WorkDir: t.TempDir(), Enforcement: moat.BestEffort})
			if sb.Report().Active("control-paths") {
				t.Fatalf("control paths reported active without a mount namespace:\n%s", sb.Report())
			}
		})
	})
}

// Without a mount namespace nothing keeps a repository's hooks and config
// read-only during the run; Close is then the only defence: it moves every
// change aside, restores the original config and reports each. Control:
// the same writes, left in place, make the host's git run the payload.
func TestWithoutNamespacesGitChangesUndoneAtClose(t *testing.T) {
	need(t, "git")
	newRepo := func(t *testing.T) (string, string) {
		w := t.TempDir()
		newHostRepo(t, w)
		return w, filepath.Join(t.TempDir(), "PAYLOAD-RAN")
	}
	attack := `printf '[core]\n\tfsmonitor = "touch %s"\n' "$M" >> .git/config && ` +
		`printf '#!/bin/sh\ntouch "%s"\n' "$M" > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && echo WROTE`
	trigger := func(w string) string {
		return hostGitTry(w, nil, "status") + hostGitTry(w, nil, "commit", "-q", "--allow-empty", "-m", "x")
	}
	exists := func(p string) bool { _, err := os.Lstat(p); return err == nil }

	t.Run("sandbox", func(t *testing.T) {
		withoutNamespaces(t, func(t *testing.T) {
			w, m := newRepo(t)
			config, _ := os.ReadFile(filepath.Join(w, ".git/config"))
			sb, err := moat.New(moat.Config{WorkDir: w, Enforcement: moat.BestEffort})
			if err != nil {
				t.Fatal(err)
			}
			if sb.Report().Active("control-paths") {
				t.Fatalf("control paths active without a mount namespace:\n%s", sb.Report())
			}
			c := sb.Command("/bin/sh", "-c", attack)
			c.Dir, c.Env = w, []string{"M=" + m}
			out, err := c.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "WROTE") {
				t.Fatalf("without a mount namespace the writes should succeed during the run: %v %s", err, out)
			}
			if err := sb.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if got := trigger(w); exists(m) {
				t.Errorf("the host's git ran the sandbox's payload after Close: %s\nrefusals %v", got, sb.Refusals())
			}
			if now, _ := os.ReadFile(filepath.Join(w, ".git/config")); string(now) != string(config) {
				t.Errorf("config not restored: %q, was %q", now, config)
			}
			named := map[string]bool{}
			for _, r := range sb.Refusals() {
				if r.Kind == "git-control" {
					named[r.Subject] = true
				}
			}
			for _, p := range []string{".git/config", ".git/hooks/pre-commit"} {
				if !named[filepath.Join(w, p)] {
					t.Errorf("Refusals does not name %s: %v", p, sb.Refusals())
				}
			}
		})
	})
	t.Run("control", func(t *testing.T) {
		w, m := newRepo(t)
		c := exec.Command("/bin/sh", "-c", attack)
		c.Dir, c.Env = w, append(os.Environ(), "M="+m)
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("%v %s", err, out)
		}
		if got := trigger(w); !exists(m) {
			t.Fatalf("control: the host's git did not run the payload: %s", got)
		}
	})
}

// A host that refuses namespaces only when the first command starts (New
// still believed they work) must not get a Strict sandbox that runs with
// less than it promised: a supplied working directory's git control paths
// can no longer be pinned, so the command is refused with an
// *UnsupportedError and does not run. The control: the same working
// directory at best effort runs the command, which writes its marker.
func TestStrictRefusesWhatTheFallbackLoses(t *testing.T) {
	moattest.WithoutUserNamespaces(t, func(t *testing.T) {
		work := t.TempDir()
		marker := filepath.Join(work, "ran")
		sb := newSandbox(t, moat.Config{WorkDir: work})
		err := sb.Command("sh", "-c", "echo yes > ran").Run()
		if !errors.Is(err, moat.ErrUnsupported) {
			t.Fatalf("a Strict sandbox fell back without namespaces and ran its command: err = %v", err)
		}
		if _, statErr := os.Stat(marker); statErr == nil {
			t.Fatal("the refused command ran anyway: its marker exists")
		}
		if !strings.Contains(err.Error(), "control paths") {
			t.Errorf("the refusal does not say what is missing: %v", err)
		}
		// The backend stays without namespaces: every later command of
		// the same sandbox is refused too, not only the one that met
		// the fallback.
		for i := range 3 {
			if err := sb.Command("sh", "-c", "echo yes > ran").Run(); !errors.Is(err, moat.ErrUnsupported) {
				t.Fatalf("command %d after the fallback ran in a Strict sandbox: err = %v", i+2, err)
			}
		}
		if _, statErr := os.Stat(marker); statErr == nil {
			t.Fatal("a later command ran anyway: its marker exists")
		}
		// Control: at best effort the same command runs without namespaces.
		be := newSandbox(t, moat.Config{WorkDir: work, Enforcement: moat.BestEffort})
		if err := be.Command("sh", "-c", "echo yes > ran").Run(); err != nil {
			t.Fatalf("control: best effort cannot run the command: %v", err)
		}
		if _, err := os.Stat(marker); err != nil {
			t.Fatalf("control: best effort's command left no marker: %v", err)
		}
	})
}
