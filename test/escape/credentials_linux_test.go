//go:build linux

package escape_test

// Credential files that toolchains keep inside the curated home entries of
// the default level (~/.cargo, ~/.cache/huggingface, ~/.sbt, ~/.config/pip,
// ~/.local/share/jupyter, ...) and the other registry, database and cloud
// credentials of issue 8 item 3. These tests plant decoys in the real home,
// so they do not run in parallel with the rest (see harness_protect_linux_test.go).

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

// credentialDecoy is a secret planted in the home. curated says it lies in
// a curated entry of the default level, so that the default level reads
// it once ProtectCredentials is lifted; scanned says no list names it and
// only the scan of curated directories finds it.
type credentialDecoy struct {
	rel     string
	curated bool
	scanned bool
}

// credentialDecoys are the files of issue 8 item 3, and files no list
// names that the curated-directory scan must find.
func credentialDecoys(tag string) []credentialDecoy {
	list := []credentialDecoy{
		{".cache/huggingface/token", true, false},
		{".cache/huggingface/stored_tokens", true, false},
		{".ivy2/.credentials", true, false},
		{".sbt/.credentials", true, false},
		{".sbt/1.0/credentials", true, false},
		{".config/pip/pip.conf", true, false},
		{".pip/pip.conf", true, false},
		{".config/uv/uv.toml", true, false},
		{".local/share/jupyter/runtime/jpserver-4242.json", true, false},
		{".local/share/jupyter/runtime/jupyter_cookie_secret", true, false},
		{".cargo/config.toml", true, false},
		{".cargo/config", true, false},
		{".cargo/credentials.toml", true, false},
		{".gradle/gradle.properties", true, false},
		{".m2/settings-security.xml", true, false},
		{".m2/settings.xml", true, false},
		{".condarc", true, false},
		{".gem/credentials", true, false},
		{".nuget/NuGet/NuGet.Config", true, false},
		{".config/git/credentials", true, false},
		// Not in a curated entry: hidden with the rest of the home at
		// default, by the lists at permissive.
		{".config/hub", false, false},
		{".config/gh/hosts.yml", false, false},
		{".terraform.d/credentials.tfrc.json", false, false},
		{".config/rclone/rclone.conf", false, false},
		{".pgpass", false, false},
		{".my.cnf", false, false},
		{".config/containers/auth.json", false, false},
		{".docker/config.json", false, false},
		{".config/pypoetry/auth.toml", false, false},
		{".config/composer/auth.json", false, false},
		{".composer/auth.json", false, false},
		{".npmrc", false, false},
		{".yarnrc.yml", false, false},
		{".netrc", false, false},
		{".git-credentials", false, false},
		{".pypirc", false, false},
		{".bundle/config", false, false},
		{".vault-token", false, false},
		// Named by no list: found by the scan of curated directories.
		{".cargo/moat-registry-token-" + tag, true, true},
		{".cache/huggingface/moat-" + tag + "-secret.json", true, true},
		{".sbt/1.0/moat-" + tag + "/credentials", true, true},
		{".julia/servers/moat-" + tag + ".example/auth.toml", true, true},
		{".local/share/jupyter/moat-" + tag + "/server.pem", true, true},
	}
	return list
}

// credentialNeighbours are ordinary files beside the decoys in the same
// curated directories: the toolchain keeps working.
var credentialNeighbours = []string{
	".cache/huggingface/moat-neighbour", ".sbt/1.0/moat-neighbour.sbt", ".ivy2/moat-neighbour",
	".config/pip/moat-neighbour", ".local/share/jupyter/moat-neighbour.json", ".cargo/moat-neighbour.toml",
	".gradle/moat-neighbour", ".m2/moat-neighbour.xml", ".gem/moat-neighbour", ".config/git/moat-neighbour",
	".julia/servers/moat-neighbour", ".config/uv/moat-neighbour",
}

// Every credential file of issue 8 item 3, and ones no list names in the
// curated directories, is unreadable at default and permissive, while an
// ordinary file beside it in the same curated directory is read (the
// toolchain still works). Controls: the host reads every decoy; with
// ProtectCredentials lifted at default the curated ones are read, and with
// every protection lifted at permissive all of them are.
func TestCredentialsInCuratedPaths(t *testing.T) {
	h := home(t)
	tag := randomHex(4)
	type planted struct {
		credentialDecoy
		path, content string
	}
	var secrets []planted
	for i, d := range credentialDecoys(tag) {
		p := filepath.Join(h, d.rel)
		if _, err := os.Lstat(p); err == nil {
			t.Logf("%s exists in the home: not planted (TestProtectedPaths probes it blind)", p)
			continue
		}
		c := fmt.Sprintf("CRED-DECOY-%d-%s", i, tag)
		if d.rel == ".config/hub" {
			plantHome(t, d.rel, "oauth_token: "+c)
		} else {
			plantHome(t, d.rel, c)
		}
		secrets = append(secrets, planted{d, p, c})
	}
	if len(secrets) < len(credentialDecoys(tag))/2 {
		t.Fatalf("only %d decoys could be planted in %s", len(secrets), h)
	}
	var neighbours []planted
	for i, rel := range credentialNeighbours {
		p := filepath.Join(h, rel)
		if _, err := os.Lstat(p); err == nil {
			continue
		}
		c := fmt.Sprintf("CRED-NEIGHBOUR-%d-%s", i, tag)
		plantHome(t, rel, c)
		neighbours = append(neighbours, planted{path: p, content: c})
	}
	var probe strings.Builder
	for _, s := range append(append([]planted(nil), secrets...), neighbours...) {
		probe.WriteString("cat " + shq(s.path) + " 2>/dev/null; echo; ")
	}
	hr := hostSh(t, probe.String())
	for _, s := range append(append([]planted(nil), secrets...), neighbours...) {
		mustContain(t, hr, s.content) // control: the probe reads them on the host
	}

	// Package-registry credentials have their own switch since the split
	// (issue 16); the control lifts both, as ProtectCredentials did alone.
	noCredentials := func(s *moat.SecurityConfig) { s.ProtectCredentials, s.ProtectPackageCredentials = false, false }
	nothing := func(s *moat.SecurityConfig) { *s = moat.SecurityConfig{} }
	for _, c := range []struct {
		name string
		cfg  moat.Config
		// open says whether a secret must be read in this configuration.
		open func(planted) bool
	}{
		{"default", levelConfig(moat.IsolationDefault, nil), func(planted) bool { return false }},
		{"permissive", levelConfig(moat.IsolationPermissive, nil), func(planted) bool { return false }},
		{"permissive+protect-user-home", levelConfig(moat.IsolationPermissive, func(s *moat.SecurityConfig) { s.ProtectUserHome = true }), func(planted) bool { return false }},
		{"control: default without ProtectCredentials", levelConfig(moat.IsolationDefault, noCredentials), func(s planted) bool { return s.curated }},
		{"control: permissive without protections", levelConfig(moat.IsolationPermissive, nothing), func(planted) bool { return true }},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := sh(t, newSandbox(t, c.cfg), probe.String())
			out := r.Stdout + r.Stderr
			for _, s := range secrets {
				got := strings.Contains(out, s.content)
				switch want := c.open(s); {
				case got && !want:
					kind := "listed"
					if s.scanned {
						kind = "unlisted (scan)"
					}
					t.Errorf("%s credential %s was read under %s", kind, s.path, c.name)
				case !got && want:
					t.Errorf("control: %s was not read under %s, so its denial elsewhere may not come from the protection", s.path, c.name)
				}
			}
			for _, n := range neighbours {
				if !strings.Contains(out, n.content) {
					t.Errorf("the ordinary file %s beside the credentials was not read under %s: the toolchain would break", n.path, c.name)
				}
			}
			if t.Failed() {
				t.Logf("probe output: %s", r)
			}
		})
	}
}

// A curated toolchain entry that is a link (a dotfile manager's ~/.sbt ->
// ~/dotfiles/sbt) shows what it leads to, so a credential there that no
// list names must be found by the scan as well: unreadable through the
// link and at its real path, at default and permissive, while an ordinary
// file beside it is read. Controls: the host reads both; with
// ProtectCredentials lifted at default the credential is read through the
// link and at its real path.
func TestCredentialsInLinkedCuratedDir(t *testing.T) {
	h := home(t)
	tag := randomHex(4)
	link := ""
	for _, rel := range []string{".sbt", ".deno", ".julia", ".nimble", ".elan"} { // curated entries
		if _, err := os.Lstat(filepath.Join(h, rel)); errors.Is(err, os.ErrNotExist) {
			link = rel
			break
		}
	}
	if link == "" {
		t.Fatalf("every candidate curated entry exists in %s: nothing to plant", h)
	}
	realRel := "moat-dotfiles-" + tag
	secretRel := filepath.Join(realRel, "moat-"+tag+".token") // no list names it: the scan must
	neighbourRel := filepath.Join(realRel, "moat-neighbour.txt")
	secret, neighbour := "LINKED-CRED-"+tag, "LINKED-NEIGHBOUR-"+tag
	plantHome(t, secretRel, secret)
	plantHome(t, neighbourRel, neighbour)
	if err := os.Symlink(realRel, filepath.Join(h, link)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(filepath.Join(h, link)) })
	viaLink := filepath.Join(h, link, filepath.Base(secretRel))
	atReal := filepath.Join(h, secretRel)
	probe := "cat " + shq(viaLink) + " 2>/dev/null; echo; cat " + shq(atReal) + " 2>/dev/null; echo; cat " +
		shq(filepath.Join(h, link, filepath.Base(neighbourRel))) + " 2>/dev/null; echo"
	hr := hostSh(t, probe)
	mustContain(t, hr, secret)
	mustContain(t, hr, neighbour)

	noCredentials := func(s *moat.SecurityConfig) { s.ProtectCredentials, s.ProtectPackageCredentials = false, false }
	for _, c := range []struct {
		name       string
		cfg        moat.Config
		secretOpen bool
	}{
		{"default", levelConfig(moat.IsolationDefault, nil), false},
		{"permissive", levelConfig(moat.IsolationPermissive, nil), false},
		{"control: default without ProtectCredentials", levelConfig(moat.IsolationDefault, noCredentials), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := sh(t, newSandbox(t, c.cfg), probe)
			out := r.Stdout + r.Stderr
			lines := strings.Split(r.Stdout, "\n")
			for i, p := range []string{viaLink, atReal} {
				got := i < len(lines) && strings.Contains(lines[i], secret)
				switch {
				case got && !c.secretOpen:
					t.Errorf("the credential in the linked toolchain directory was read at %s under %s", p, c.name)
				case !got && c.secretOpen:
					t.Errorf("control: %s was not read under %s, so its denial elsewhere may not come from the scan", p, c.name)
				}
			}
			if !strings.Contains(out, neighbour) {
				t.Errorf("the ordinary file beside the credential was not read under %s: the toolchain would break", c.name)
			}
			if t.Failed() {
				t.Logf("probe output: %s", r)
			}
		})
	}
}
