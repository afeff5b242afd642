//go:build linux

package escape_test

// Isolation-level probes: what strict, default and permissive sandboxes
// see of the user's home and of the shared temporary directories, and what
// they may write and execute there (heel I1, I2, I3, I4, I5, I14).

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

// userSitePackages is where python3 on the host looks for the user's
// site-packages.
func userSitePackages(t *testing.T) string {
	t.Helper()
	r := hostPython(t, "import site; print(site.getusersitepackages())")
	p := strings.TrimSpace(r.Stdout)
	if r.Err != nil || !strings.HasPrefix(p, home(t)+"/") {
		t.Fatalf("cannot find the user site-packages: %s", r)
	}
	return p
}

// The default level opens, read-only, the curated toolchain entries of the
// home and keeps the rest of the home closed: another project's .env and a
// document are unreadable while git (with the user's ~/.gitconfig through
// GIT_CONFIG_GLOBAL), python3 (with a module from the user site through
// PYTHONUSERBASE) and toolchains installed under the home work. Strict
// opens none of it; the home's protection lifted, or permissive, opens the
// rest too, never the protected paths inside curated entries. Control: the
// host runs every probe.
func TestIsolationHomeByLevel(t *testing.T) {
	need(t, "git", "python3")
	h := home(t)
	tag := randomHex(4)

	sibling := plantHome(t, "moat-proj2-"+tag+"/.env", "SIBLING-ENV-"+tag)
	doc := plantHome(t, "Documents/moat-notes-"+tag+".txt", "DOCUMENT-"+tag)
	gitName := "Moat Home User " + tag
	gitconfig := filepath.Join(h, ".gitconfig")
	if exists(gitconfig) {
		// A real one: learn its name instead of replacing it.
		gitName = strings.TrimSpace(hostSh(t, "git config --global user.name").Stdout)
		if gitName == "" {
			t.Fatalf("%s exists without user.name; the git probe needs a known name", gitconfig)
		}
	} else {
		plantHome(t, ".gitconfig", "[user]\n\tname = "+gitName+"\n\temail = moat-home@example.invalid\n")
	}
	site := userSitePackages(t)
	mod := "moatprobe_" + tag
	plantHome(t, strings.TrimPrefix(filepath.Join(site, mod+".py"), h+"/"), "MARK = 'USER-SITE-"+tag+"'\n")
	cargoTool := plantExec(t, ".cargo/bin/moat-tool-"+tag, "CARGO-TOOL-"+tag)
	localTool := plantExec(t, ".local/bin/moat-tool-"+tag, "LOCAL-TOOL-"+tag)
	cache := plantHome(t, ".cache/pip/moat-cache-"+tag+".txt", "CACHE-"+tag)
	// Documents under ~/.local and ~/.cache: the curated list names tool
	// directories there, not these.
	trash := plantHome(t, ".local/share/Trash/files/moat-"+tag+".txt", "TRASHED-DOCUMENT-"+tag)
	thumb := plantHome(t, ".cache/thumbnails/normal/moat-"+tag+".png", "THUMBNAIL-"+tag)
	// Protected paths inside curated entries. The keyrings are a protected
	// directory, so a uniquely named file inside does; the other two are
	// protected files, planted only where the user has none.
	keyring := plantHome(t, ".local/share/keyrings/moat-"+tag+".keyring", "KEYRING-"+tag)
	plantIfAbsent := func(rel, content string) string {
		if exists(filepath.Join(h, rel)) {
			t.Logf("%s exists in the home: not probed here (TestProtectedPaths probes it blind)", rel)
			return ""
		}
		return plantHome(t, rel, content)
	}
	cargoCreds := plantIfAbsent(".cargo/credentials.toml", "CARGO-CREDS-"+tag)
	fish := plantIfAbsent(".local/share/fish/fish_history", "FISH-HISTORY-"+tag)
	bashrc := filepath.Join(h, ".bashrc")
	if !exists(bashrc) {
		plantHome(t, ".bashrc", "# moat decoy bashrc\n")
	}

	// want: "yes" (the probe must show its marker), "no" (it must not), ""
	// (not asserted at that level).
	type level struct{ strict, dflt, open, permissive string }
	probes := []struct {
		name, script, marker string
		want                 level
	}{
		{"sibling project .env", "cat " + shq(sibling), "SIBLING-ENV-" + tag, level{"no", "no", "yes", "yes"}},
		{"document", "cat " + shq(doc), "DOCUMENT-" + tag, level{"no", "no", "yes", "yes"}},
		{"ls home", "ls -a " + shq(h), "moat-proj2-" + tag, level{"no", "no", "yes", "yes"}},
		{"read ~/.gitconfig", "cat " + shq(gitconfig), gitName, level{"no", "yes", "yes", "yes"}},
		{"read ~/.bashrc", "cat " + shq(bashrc) + " >/dev/null && echo BASHRC-READ-" + tag, "BASHRC-READ-" + tag, level{"no", "yes", "yes", "yes"}},
		{"read ~/.cache/pip", "cat " + shq(cache), "CACHE-" + tag, level{"no", "yes", "yes", "yes"}},
		{"trashed document in ~/.local/share", "cat " + shq(trash), "TRASHED-DOCUMENT-" + tag, level{"no", "no", "yes", "yes"}},
		{"document thumbnail in ~/.cache", "cat " + shq(thumb), "THUMBNAIL-" + tag, level{"no", "no", "yes", "yes"}},
		{"run ~/.cargo/bin tool", shq(cargoTool), "CARGO-TOOL-" + tag, level{"no", "yes", "yes", "yes"}},
		{"run ~/.local/bin tool", shq(localTool), "LOCAL-TOOL-" + tag, level{"no", "yes", "yes", "yes"}},
		{"python user site", "python3 -c 'import " + mod + "; print(" + mod + ".MARK)'", "USER-SITE-" + tag, level{"no", "yes", "yes", ""}},
		{"git --version", "git --version", "git version", level{"yes", "yes", "yes", "yes"}},
		{"git commit with ~/.gitconfig identity",
			`d=$(mktemp -d) && cd "$d" && git init -q . && echo x > f && git add f && git commit -q -m probe && git log -1 --format='%an'; rm -rf "$d"`,
			gitName, level{"no", "yes", "yes", ""}},
		{"keyring inside ~/.local", "cat " + shq(keyring), "KEYRING-" + tag, level{"no", "no", "no", "no"}},
		{"credentials inside ~/.cargo", "cat " + shq(cargoCreds), "CARGO-CREDS-" + tag, level{"no", "no", "no", "no"}},
		{"fish history inside ~/.local", "cat " + shq(fish), "FISH-HISTORY-" + tag, level{"no", "no", "no", "no"}},
	}
	configs := []struct {
		name string
		cfg  moat.Config
		pick func(level) string
	}{
		{"strict", moat.Config{}, func(l level) string { return l.strict }},
		{"default", levelConfig(moat.IsolationDefault, nil), func(l level) string { return l.dflt }},
		{"default-home-unprotected", levelConfig(moat.IsolationDefault, homeOpen), func(l level) string { return l.open }},
		{"permissive", levelConfig(moat.IsolationPermissive, nil), func(l level) string { return l.permissive }},
	}
	// Drop the probes of decoys that could not be planted.
	kept := probes[:0]
	for _, p := range probes {
		if !strings.HasSuffix(p.script, "cat ''") {
			kept = append(kept, p)
		}
	}
	probes = kept
	for _, p := range probes {
		// Control: on the host every probe shows its marker.
		if r := hostSh(t, p.script); !strings.Contains(r.Stdout, p.marker) {
			t.Fatalf("control: on the host %q does not print %q: %s", p.name, p.marker, r)
		}
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			sb := newSandbox(t, c.cfg)
			for _, p := range probes {
				want := c.pick(p.want)
				if want == "" {
					continue
				}
				t.Run(p.name, func(t *testing.T) {
					t.Parallel()
					r := sh(t, sb, p.script)
					got := strings.Contains(r.Stdout, p.marker)
					switch {
					case want == "yes" && !got:
						t.Errorf("at %s, %q should work but does not: %s", c.name, p.name, r)
					case want == "no" && got:
						t.Errorf("at %s, %q should be denied but printed %q: %s", c.name, p.name, p.marker, r)
					}
				})
			}
		})
	}
	t.Run("default env", func(t *testing.T) {
		sb := newSandbox(t, levelConfig(moat.IsolationDefault, nil))
		r := sh(t, sb, `printf '%s|%s|%s\n' "$HOME" "$GIT_CONFIG_GLOBAL" "$PYTHONUSERBASE"`)
		got := strings.SplitN(strings.TrimSpace(r.Stdout), "|", 2)
		// HOME is the sandbox's private home: never the working
		// directory, never the real home.
		if len(got) != 2 || got[0] == sb.WorkDir() || got[0] == h || !filepath.IsAbs(got[0]) {
			t.Errorf("HOME should be a private directory, not the working directory or %s: %s", h, r)
		}
		want := gitconfig + "|" + filepath.Join(h, ".local")
		if len(got) != 2 || got[1] != want {
			t.Errorf("want GIT_CONFIG_GLOBAL|PYTHONUSERBASE = %q, got %s", want, r)
		}
	})
	t.Run("default home read-only", func(t *testing.T) {
		// The curated entries are read-only: nothing can be added to
		// ~/.cargo/bin or changed in ~/.cache (decoys, never a real file).
		sb := newSandbox(t, levelConfig(moat.IsolationDefault, nil))
		planted := filepath.Join(filepath.Dir(cargoTool), "moat-planted-"+tag)
		t.Cleanup(func() { os.Remove(planted) })
		before := snapshot(cache)
		r := sh(t, sb, "echo planted > "+shq(planted)+"; echo tampered >> "+shq(cache))
		if exists(planted) || snapshot(cache) != before {
			t.Fatalf("the default level wrote into curated home entries: %s", r)
		}
		// Control: permissive writes there.
		sh(t, newSandbox(t, levelConfig(moat.IsolationPermissive, nil)), "echo planted > "+shq(planted))
		if !exists(planted) {
			t.Fatalf("control: permissive could not write %s either, so the probe proves nothing", planted)
		}
	})
}

// Permissive level writes everything but protected paths: a file in the
// home appears on the host. Strict and default cannot write there.
func TestIsolationPermissiveWrites(t *testing.T) {
	dir := plantHomeDir(t, ".moat-perm-"+randomHex(4))
	for _, c := range []struct {
		name  string
		cfg   moat.Config
		write bool
	}{
		{"strict", moat.Config{}, false},
		{"default", levelConfig(moat.IsolationDefault, nil), false},
		{"default-home-unprotected", levelConfig(moat.IsolationDefault, homeOpen), false},
		{"permissive", levelConfig(moat.IsolationPermissive, nil), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			target := filepath.Join(dir, c.name+".txt")
			r := sh(t, newSandbox(t, c.cfg), "echo PERM-WROTE > "+shq(target))
			if got := contentOf(dir, c.name+".txt") == "PERM-WROTE\n"; got != c.write {
				t.Errorf("at %s, writing %s: want written=%v, got %v: %s", c.name, target, c.write, got, r)
			}
		})
	}
}

// I5: at default and permissive the host's shared temporary directory's
// readable files are readable but nothing is written there (the sandbox's
// /tmp is its own: see privatetemp_linux_test.go); at strict they are not even
// readable.
func TestIsolationSharedTemp(t *testing.T) {
	t.Parallel()
	tag := randomHex(6)
	// Not named moat-*: those are other sandboxes' working directories,
	// which stay unreadable (the last subtest).
	decoy := filepath.Join("/tmp", "escape-shared-"+tag)
	plant(t, decoy, "SHARED-TMP-"+tag)
	if err := os.Chmod(decoy, 0o644); err != nil { // a file only its owner reads is left out
		t.Fatal(err)
	}
	mustContain(t, hostSh(t, "cat "+decoy), "SHARED-TMP-"+tag) // control
	levels := []struct {
		name        string
		cfg         moat.Config
		read, write bool
	}{
		{"strict", moat.Config{}, false, false},
		{"default", levelConfig(moat.IsolationDefault, nil), true, false},
		{"permissive", levelConfig(moat.IsolationPermissive, nil), true, false},
	}
	for _, l := range levels {
		t.Run(l.name, func(t *testing.T) {
			t.Parallel()
			sb := newSandbox(t, l.cfg)
			r := sh(t, sb, "cat "+decoy+"; ls /tmp")
			if got := strings.Contains(r.Stdout, "SHARED-TMP-"+tag); got != l.read {
				t.Errorf("at %s, reading the host's %s: want %v, got %v: %s", l.name, decoy, l.read, got, r)
			}
			for _, dir := range []string{"/tmp", "/var/tmp"} {
				target := filepath.Join(dir, "escape-i5-"+l.name+"-"+tag)
				t.Cleanup(func() { os.Remove(target) })
				w := sh(t, sb, "echo I5-WROTE > "+target)
				if got := exists(target); got != l.write {
					t.Errorf("at %s, writing %s: want reaching the host %v, got %v: %s", l.name, target, l.write, got, w)
				}
				if !l.write && w.Err != nil {
					t.Errorf("at %s, writing %s inside should succeed, in the private temp: %s", l.name, target, w)
				}
			}
		})
	}
	// Anyone can plant a link in shared temp; at default it must not lead
	// the sandbox to what it points at (a protected key, another place).
	t.Run("link planted in shared temp at default", func(t *testing.T) {
		t.Parallel()
		// In the home, which the default level does not show: only the
		// link could lead there.
		secretDir := filepath.Join(home(t), "escape-linked-"+tag)
		if err := os.Mkdir(secretDir, 0o700); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(secretDir) })
		secret := filepath.Join(secretDir, "secret.txt")
		plant(t, secret, "LINKED-SECRET-"+tag)
		link := filepath.Join("/tmp", "escape-link-"+tag)
		if err := os.Symlink(secretDir, link); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(link) })
		mustContain(t, hostSh(t, "cat "+link+"/secret.txt"), "LINKED-SECRET-"+tag) // control
		r := sh(t, newSandbox(t, levelConfig(moat.IsolationDefault, nil)), "cat "+link+"/secret.txt; ls "+link+"/")
		mustNotContain(t, r, "LINKED-SECRET-"+tag)
		mustNotContain(t, r, "secret.txt\n")
	})
	// Another sandbox's automatic working directory lies in /tmp too; the
	// default level's read access to shared temp does not reach into it.
	t.Run("other sandbox's workdir at default", func(t *testing.T) {
		t.Parallel()
		other := newSandbox(t, moat.Config{})
		if r := sh(t, other, "echo OTHER-SANDBOX-"+tag+" > work.txt"); r.Err != nil {
			t.Fatalf("the other sandbox cannot write its working directory: %s", r)
		}
		probe := "cat " + filepath.Join(other.WorkDir(), "work.txt") + "; ls " + other.WorkDir()
		mustContain(t, hostSh(t, probe), "OTHER-SANDBOX-"+tag) // control
		r := sh(t, newSandbox(t, levelConfig(moat.IsolationDefault, nil)), probe)
		mustNotContain(t, r, "OTHER-SANDBOX-"+tag)
		mustNotContain(t, r, "work.txt\n")
	})
}

// I3: at permissive level nothing written to a shared temporary directory
// (/tmp, /var/tmp, /dev/shm) can be executed, by exec, the dynamic loader or
// dlopen, and neither can a program the host put in /tmp, nor a payload
// written into the working directory, which stays never executable at
// every level. I4 and the controls: the same probes run their payload in
// another directory of the home, where permissive gives write-xor-execute
// up, and on the host. The working directory is supplied, in the
// home, so that it is not itself in shared temp (an automatic one is made
// in /tmp); so this test does not run in parallel with the rest.
func TestIsolationPermissiveSharedTempNoExec(t *testing.T) {
	need(t, "gcc", "python3")
	tag := randomHex(4)
	cfg := levelConfig(moat.IsolationPermissive, nil)
	cfg.WorkDir = plantHomeDir(t, ".moat-i3-workdir-"+tag)
	elsewhere := plantHomeDir(t, ".moat-i3-elsewhere-"+tag)
	sb := newSandbox(t, cfg)
	t.Run("I4 runs programs", func(t *testing.T) {
		t.Parallel()
		r := sh(t, sb, "echo permissive-ok")
		if r.Err != nil || !stdoutLine(r, "permissive-ok") {
			t.Fatalf("permissive cannot run echo: %s", r)
		}
	})
	for _, dir := range []string{"/tmp", "/var/tmp", "/dev/shm"} {
		for _, p := range execProbes {
			t.Run(dir+"/"+p.name, func(t *testing.T) {
				t.Parallel()
				d := filepath.Join(dir, "moat-i3-"+strings.ReplaceAll(p.name, " ", "-")+"-"+randomHex(4))
				t.Cleanup(func() { os.RemoveAll(d) })
				r := shEnv(t, sb, []string{"D=" + d}, `mkdir -p "$D" && `+p.script)
				if !stdoutLine(r, "CREATED") {
					t.Fatalf("permissive could not write its payload into %s, so the probe proves nothing: %s", d, r)
				}
				if stdoutLine(r, "EXECUTED") {
					t.Fatalf("code written into %s was executed at permissive level: %s", dir, r)
				}
			})
		}
	}
	for _, p := range execProbes {
		t.Run("workdir stays not executable/"+p.name, func(t *testing.T) {
			t.Parallel()
			// The working directory is never executable, at any level.
			d := filepath.Join(sb.WorkDir(), "x-"+strings.ReplaceAll(p.name, " ", "-"))
			r := shEnv(t, sb, []string{"D=" + d}, `mkdir -p "$D" && `+p.script)
			if !stdoutLine(r, "CREATED") {
				t.Fatalf("could not write the payload into the working directory, so the probe proves nothing: %s", r)
			}
			if stdoutLine(r, "EXECUTED") {
				t.Fatalf("at permissive level a payload written into the working directory ran: %s", r)
			}
		})
		t.Run("control-home/"+p.name, func(t *testing.T) {
			t.Parallel()
			d := filepath.Join(elsewhere, strings.ReplaceAll(p.name, " ", "-"))
			r := shEnv(t, sb, []string{"D=" + d}, `mkdir -p "$D" && `+p.script)
			if !stdoutLine(r, "CREATED") || !stdoutLine(r, "EXECUTED") {
				t.Fatalf("control: at permissive level a payload written into the home should run: %s", r)
			}
		})
		t.Run("control-host/"+p.name, func(t *testing.T) {
			t.Parallel()
			d := filepath.Join("/tmp", "moat-i3-host-"+randomHex(4))
			t.Cleanup(func() { os.RemoveAll(d) })
			r := hostSh(t, `D=`+d+` && mkdir -p "$D" && `+p.script)
			if !stdoutLine(r, "EXECUTED") {
				t.Fatalf("control: the host does not run the payload from /tmp: %s", r)
			}
		})
	}
	t.Run("host-planted program in /tmp", func(t *testing.T) {
		t.Parallel()
		// Not named moat-*: those stay out of a sandbox's /tmp.
		prog := filepath.Join("/tmp", "escape-i3-hostprog-"+randomHex(4))
		plant(t, prog, "#!/bin/sh\necho EXECUTED\n")
		if err := os.Chmod(prog, 0o755); err != nil {
			t.Fatal(err)
		}
		if r := onHost(t, prog); !stdoutLine(r, "EXECUTED") {
			t.Fatalf("control: the host cannot run %s: %s", prog, r)
		}
		// A sandbox sees the shared-temp files there when it is built.
		sb := newSandbox(t, cfg)
		r := inSandbox(t, sb, prog)
		if stdoutLine(r, "EXECUTED") {
			t.Fatalf("a program in /tmp ran at permissive level: %s", r)
		}
		r = sh(t, sb, "/bin/sh -c "+prog+"; cat "+prog)
		if stdoutLine(r, "EXECUTED") {
			t.Fatalf("a program in /tmp ran at permissive level through a shell: %s", r)
		}
		mustContain(t, r, "echo EXECUTED") // it is readable, only not executable
	})
}

// I1: a READ grant of a directory in the home opens the file in it at every
// level; without the grant, strict and default do not read it.
func TestIsolationReadableGrant(t *testing.T) {
	tag := randomHex(4)
	secret := plantHome(t, ".moat-i1-"+tag+"/secret.txt", "token-value-"+tag)
	dir := filepath.Dir(secret)
	mustContain(t, hostSh(t, "cat "+secret), "token-value-"+tag) // control
	for _, level := range []moat.Isolation{moat.IsolationStrict, moat.IsolationDefault, moat.IsolationPermissive} {
		t.Run(level.String(), func(t *testing.T) {
			r := sh(t, newSandbox(t, readGrant(t, levelConfig(level, nil), dir)), "cat "+secret)
			if r.Err != nil {
				t.Fatalf("reading a granted file failed: %s", r)
			}
			mustContain(t, r, "token-value-"+tag)
			if level != moat.IsolationPermissive {
				mustNotContain(t, sh(t, newSandbox(t, levelConfig(level, nil)), "cat "+secret), "token-value-"+tag)
			}
		})
	}
}

// I2: a READ grant of ~/.moat-integration-scratch at default level beats
// the home's protection, and only for that directory.
func TestIsolationGrantBeatsHomeProtection(t *testing.T) {
	tag := randomHex(4)
	scratch := filepath.Join(home(t), ".moat-integration-scratch")
	var file string
	if exists(scratch) {
		file = plantHome(t, ".moat-integration-scratch/visible-"+tag, "visible-"+tag)
	} else {
		file = plantHome(t, ".moat-integration-scratch/visible", "visible-"+tag)
	}
	other := plantHome(t, ".moat-i2-other-"+tag+"/hidden", "hidden-"+tag)
	probe := "cat " + file + "; cat " + other
	mustContain(t, hostSh(t, probe), "hidden-"+tag) // control
	cfg := readGrant(t, levelConfig(moat.IsolationDefault, nil), scratch)
	r := sh(t, newSandbox(t, cfg), probe)
	mustContain(t, r, "visible-"+tag)
	mustNotContain(t, r, "hidden-"+tag)
	mustNotContain(t, sh(t, newSandbox(t, levelConfig(moat.IsolationDefault, nil)), probe), "visible-"+tag)
}

// I14: a grant of a missing path is an error, from NewResolvedPath and from
// New at every level, that names the path. Control: an existing path is
// accepted.
func TestIsolationMissingGrantNamesPath(t *testing.T) {
	t.Parallel()
	const missing = "/definitely/not/a/real/path"
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s exists on this host", missing)
	}
	if _, err := moat.NewResolvedPath(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("NewResolvedPath(%s): want an error naming the path, got %v", missing, err)
	}
	for _, level := range []moat.Isolation{moat.IsolationStrict, moat.IsolationDefault, moat.IsolationPermissive} {
		cfg := levelConfig(level, nil)
		cfg.Grants = []moat.Grant{{Path: missing, Access: moat.READ}}
		sb, err := moat.New(cfg)
		if err == nil {
			sb.Close()
			t.Errorf("at %s, moat.New accepted a grant of missing %s", level, missing)
		} else if !strings.Contains(err.Error(), missing) {
			t.Errorf("at %s, the error does not name %s: %v", level, missing, err)
		}
		cfg.Grants = []moat.Grant{{Path: "/usr/share", Access: moat.READ}}
		sb, err = moat.New(cfg)
		if err != nil {
			t.Fatalf("control: at %s, moat.New refused an existing grant: %v", level, err)
		}
		sb.Close()
	}
	// The CLI's spelling path goes through ResolvePaths: it names the path too.
	if _, _, err := moat.ResolvePaths("", []moat.PathRequest{{Path: missing, Access: moat.READ}}); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("ResolvePaths(%s): want an error naming the path, got %v", missing, err)
	}
}
