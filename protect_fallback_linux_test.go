package moat_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

// Without namespaces nothing can be masked: Landlock rules carved around
// the protected paths are what hold. Each case reads a decoy in a planted
// home; the control reads a file next to it through the same sandbox.
func TestWithoutNamespacesProtectionsHold(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("HOME", home)
	plantFile := func(rel, content string) string {
		p := filepath.Join(home, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
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
			moat.DisableNamespaces(sb)
			if sb.Report().Active("namespaces") {
				t.Fatal("namespaces still on")
			}
			for _, p := range tt.probes {
				out, _ := sb.Command("cat", p.path).CombinedOutput()
				content, _ := os.ReadFile(p.path)
				got := strings.Contains(string(out), string(content))
				if got != p.want {
					t.Errorf("cat %s: readable=%v, want %v (%s)", p.path, got, p.want, out)
				}
			}
		})
	}

	t.Run("protected file created after start", func(t *testing.T) {
		sb := newSandbox(t, moat.Config{Isolation: moat.IsolationPermissive})
		moat.DisableNamespaces(sb)
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
		moat.DisableNamespaces(sb)
		// The host's shared temp is never written; the private temp,
		// TMPDIR at its host path here, is written and never executed.
		shared := "/var/tmp/moat-fallback-exec-" + filepath.Base(t.TempDir()) + ".sh"
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
		if host, _ := hostRun("sh", "-c", script); !strings.Contains(host, "EXECUTED") {
			t.Fatalf("control: the host cannot run the script either: %s", host)
		}
	})

	t.Run("link planted in shared temp at default", func(t *testing.T) {
		// Outside shared temp and the home: only the link leads there.
		secretDir, err := os.MkdirTemp(".", "fallback-linked-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(secretDir)
		secretDir, _ = filepath.Abs(secretDir)
		os.WriteFile(filepath.Join(secretDir, "secret.txt"), []byte("LINKED-SECRET"), 0o644)
		link := "/tmp/fallback-link-" + filepath.Base(secretDir)
		if err := os.Symlink(secretDir, link); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(link)
		sb := newSandbox(t, moat.Config{Isolation: moat.IsolationDefault})
		moat.DisableNamespaces(sb)
		out, _ := sb.Command("cat", link+"/secret.txt").CombinedOutput()
		if strings.Contains(string(out), "LINKED-SECRET") {
			t.Fatalf("a link planted in shared temp led the sandbox out: %s", out)
		}
		if host, _ := hostRun("cat", link+"/secret.txt"); !strings.Contains(host, "LINKED-SECRET") {
			t.Fatalf("control: the host cannot follow the link either: %s", host)
		}
	})

	t.Run("control paths need a mount namespace", func(t *testing.T) {
		wd := t.TempDir()
		sb := newSandbox(t, moat.Config{WorkDir: wd, Enforcement: moat.BestEffort})
		moat.DisableNamespaces(sb)
		if sb.Report().Active("control-paths") {
			t.Fatalf("control paths reported active without a mount namespace:\n%s", sb.Report())
		}
	})
}
