//go:build linux

package escape_test

// Protection probes: every path SecurityConfig.ProtectedPaths lists stays
// unreadable wherever the isolation level or a grant of a parent directory
// would otherwise expose it, and an explicit grant of the path itself opens
// it. These tests plant decoys in the real home, so they do not run in
// parallel with the rest of the battery (see harness_protect_linux_test.go).

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

// protectedDecoy is one planted protected path.
type protectedDecoy struct {
	idx     int
	path    string // the protected path, absolute
	dir     bool   // probed as a directory holding decoyName
	name    string // the decoy file's name inside a directory entry
	content string // unique content; empty for a real file probed blind
	real    bool   // a real file of the user's: probed without reading it out
}

// probe is the Python statement that tries to read the decoy: it prints
// the decoy's content, a directory's entries, or for a real file only a
// marker. One python3 process probes every path, since a process per path
// makes the table slow.
func (d protectedDecoy) probe() string {
	switch {
	case d.real:
		return fmt.Sprintf("try_(lambda: (open(%q, 'rb').read(1), print('<READ-OK-%d>')))\n", d.path, d.idx)
	case d.dir:
		return fmt.Sprintf("try_(lambda: print(open(%q).read()))\ntry_(lambda: print('\\n'.join(os.listdir(%q))))\n",
			filepath.Join(d.path, d.name), d.path)
	}
	return fmt.Sprintf("try_(lambda: print(open(%q).read()))\n", d.path)
}

// leaked says what of the decoy the probe's output shows, or "".
func (d protectedDecoy) leaked(r result) string {
	switch {
	case d.real && strings.Contains(r.Stdout, fmt.Sprintf("<READ-OK-%d>", d.idx)):
		return "the real file was read"
	case d.content != "" && strings.Contains(r.Stdout+r.Stderr, d.content):
		return "its content " + d.content + " was printed"
	case d.dir && strings.Contains(r.Stdout, d.name):
		return "its directory was listed (" + d.name + ")"
	}
	return ""
}

// read says whether the probe's output shows the decoy was read (for the
// controls).
func (d protectedDecoy) read(r result) bool {
	if d.real {
		return strings.Contains(r.Stdout, fmt.Sprintf("<READ-OK-%d>", d.idx))
	}
	return strings.Contains(r.Stdout, d.content)
}

// plantProtected plants a decoy at every protected path. shape "file"
// plants a file at each path that has no protected path beneath it and a
// directory holding a decoy file otherwise; shape "dir" plants directories
// everywhere. A path that already exists on the host is never replaced: a
// real directory gets a decoy file inside, a real file is probed blind.
func plantProtected(t *testing.T, h string, paths []string, shape string) []protectedDecoy {
	t.Helper()
	hasBelow := func(p string) bool {
		for _, q := range paths {
			if strings.HasPrefix(q, p+"/") {
				return true
			}
		}
		return false
	}
	tag := randomHex(4)
	decoys := make([]protectedDecoy, len(paths))
	// Decide from the home as it is, before planting changes it.
	for i, p := range paths {
		if !strings.HasPrefix(p, h+"/") {
			t.Fatalf("protected path %s is not under the home %s", p, h)
		}
		d := protectedDecoy{idx: i, path: p, name: fmt.Sprintf("moat-decoy-%d-%s", i, tag),
			content: fmt.Sprintf("PROTECTED-DECOY-%d-%s", i, tag)}
		if fi, err := os.Lstat(p); err == nil {
			if fi.IsDir() {
				d.dir = true
			} else {
				t.Logf("%s exists: probing the real file without reading it out", p)
				d.real, d.content = true, ""
			}
		} else {
			d.dir = shape == "dir" || hasBelow(p)
		}
		decoys[i] = d
	}
	for _, d := range decoys {
		rel := strings.TrimPrefix(d.path, h+"/")
		switch {
		case d.real:
		case d.dir:
			plantHome(t, filepath.Join(rel, d.name), d.content)
		default:
			plantHome(t, rel, d.content)
		}
	}
	return decoys
}

func probeAll(decoys []protectedDecoy) string {
	var b strings.Builder
	b.WriteString(`import os, sys
def try_(f):
    try:
        f()
    except OSError as e:
        print("denied:", e, file=sys.stderr)
`)
	for _, d := range decoys {
		b.WriteString(d.probe())
	}
	return b.String()
}

// protectionConfig is a configuration under which every protected path
// must stay unreadable. open names the unprotected decoy that the same
// sandbox must read (the control that the denials come from the
// protections): "home" for one in a plain directory of the home, "config"
// for one in ~/.config, "local" for one in ~/.local/lib (curated at default).
type protectionConfig struct {
	name string
	cfg  func(t *testing.T) moat.Config
	open string
}

func protectionConfigs(h string) []protectionConfig {
	return []protectionConfig{
		{"default", func(*testing.T) moat.Config { return levelConfig(moat.IsolationDefault, nil) }, "local"},
		{"default-home-unprotected", func(*testing.T) moat.Config { return levelConfig(moat.IsolationDefault, homeOpen) }, "home"},
		{"permissive", func(*testing.T) moat.Config { return levelConfig(moat.IsolationPermissive, nil) }, "home"},
		{"strict+grant-home", func(t *testing.T) moat.Config { return readGrant(t, moat.Config{}, h) }, "home"},
		{"default+grant-home", func(t *testing.T) moat.Config { return readGrant(t, levelConfig(moat.IsolationDefault, nil), h) }, "home"},
		{"permissive+grant-home", func(t *testing.T) moat.Config {
			return readGrant(t, levelConfig(moat.IsolationPermissive, nil), h)
		}, "home"},
		// Grants of intermediate parents: ~/.config holds .config/gh and
		// others, ~/.local holds the keyrings and fish history.
		{"strict+grant-.config", func(t *testing.T) moat.Config {
			return readGrant(t, moat.Config{}, filepath.Join(h, ".config"))
		}, "config"},
		{"strict+grant-.local", func(t *testing.T) moat.Config {
			return readGrant(t, moat.Config{}, filepath.Join(h, ".local"))
		}, "local"},
	}
}

// Every protected path of a fully protecting SecurityConfig, planted as a
// file and as a directory, is unreadable at default and permissive level,
// with the home's protection lifted, and under a grant of the home or of an
// intermediate parent. Controls: the host reads every decoy; an explicit
// READ grant of each protected path opens it (explicit beats protection,
// heel I2); where the home is open, an unprotected decoy beside them is
// read.
func TestProtectedPaths(t *testing.T) {
	need(t, "python3")
	h := home(t)
	sec := allProtections()
	paths := sec.ProtectedPaths(h)
	if len(paths) < 50 {
		t.Fatalf("ProtectedPaths lists only %d paths: %v", len(paths), paths)
	}
	tag := randomHex(4)
	// Unprotected decoys beside the protected ones, for the controls.
	opens := map[string]string{
		"home":   plantHome(t, ".moat-open-"+tag+"/note.txt", "OPEN-DECOY-home-"+tag),
		"config": plantHome(t, ".config/moat-open-"+tag, "OPEN-DECOY-config-"+tag),
		"local":  plantHome(t, ".local/lib/moat-open-"+tag, "OPEN-DECOY-local-"+tag),
	}

	for _, shape := range []string{"file", "dir"} {
		t.Run(shape, func(t *testing.T) {
			decoys := plantProtected(t, h, paths, shape)
			script := probeAll(decoys)

			// Control: the host reads every decoy with the same script.
			hr := hostPython(t, script)
			for _, d := range decoys {
				if !d.read(hr) {
					t.Fatalf("control: the host cannot read the decoy at %s, so the probe proves nothing: %s", d.path, hr)
				}
			}

			// Control: an explicit READ grant of each protected path opens it.
			t.Run("control-explicit-grants", func(t *testing.T) {
				cfg := levelConfig(moat.IsolationDefault, nil)
				for _, d := range decoys {
					cfg.Readable(resolvedPath(t, d.path))
				}
				r := python(t, newSandbox(t, cfg), script)
				for _, d := range decoys {
					if !d.read(r) {
						t.Errorf("an explicit READ grant of %s did not open it (explicit grants beat protections)", d.path)
					}
				}
				if t.Failed() {
					t.Logf("probe output: %s", r)
				}
			})

			for _, c := range protectionConfigs(h) {
				t.Run(c.name, func(t *testing.T) {
					sb := newSandbox(t, c.cfg(t))
					r := python(t, sb, script)
					for _, d := range decoys {
						if what := d.leaked(r); what != "" {
							t.Errorf("protected %s leaked under %s: %s", d.path, c.name, what)
						}
					}
					if t.Failed() {
						t.Logf("probe output: %s", r)
					}
					// Control: the same sandbox reads an unprotected file
					// beside the protected ones, so the denials above come
					// from the protections, not from a closed home.
					mustContain(t, sh(t, sb, "cat "+shq(opens[c.open])), "OPEN-DECOY-"+c.open+"-"+tag)
				})
			}
		})
	}
}

// An explicit grant of a path inside a protected directory, or of the
// protected directory itself, opens it at every level, while its protected
// siblings stay closed (heel I2 for protections).
func TestProtectExplicitGrantBeatsProtection(t *testing.T) {
	h := home(t)
	tag := randomHex(4)
	inside := plantHome(t, ".ssh/moat-granted-"+tag, "GRANTED-INSIDE-"+tag)
	sibling := plantHome(t, ".ssh/moat-sibling-"+tag, "SIBLING-INSIDE-"+tag)
	awsCreds := plantHome(t, ".aws/moat-credentials-"+tag, "AWS-GRANTED-"+tag)
	probe := "cat " + shq(inside) + "; cat " + shq(sibling) + "; cat " + shq(awsCreds)
	mustContain(t, hostSh(t, probe), "SIBLING-INSIDE-"+tag) // control

	for _, level := range []moat.Isolation{moat.IsolationStrict, moat.IsolationDefault, moat.IsolationPermissive} {
		t.Run(level.String(), func(t *testing.T) {
			t.Run("file inside protected dir", func(t *testing.T) {
				cfg := readGrant(t, levelConfig(level, nil), inside)
				r := sh(t, newSandbox(t, cfg), probe)
				mustContain(t, r, "GRANTED-INSIDE-"+tag)
				mustNotContain(t, r, "SIBLING-INSIDE-"+tag)
				mustNotContain(t, r, "AWS-GRANTED-"+tag)
			})
			t.Run("protected dir itself", func(t *testing.T) {
				cfg := readGrant(t, levelConfig(level, nil), filepath.Join(h, ".aws"))
				r := sh(t, newSandbox(t, cfg), probe)
				mustContain(t, r, "AWS-GRANTED-"+tag)
				mustNotContain(t, r, "SIBLING-INSIDE-"+tag)
			})
			t.Run("protected dir and home", func(t *testing.T) {
				// The explicit grant wins over the protection that the
				// home grant leaves in place for the other paths.
				cfg := readGrant(t, readGrant(t, levelConfig(level, nil), h), filepath.Join(h, ".aws"))
				r := sh(t, newSandbox(t, cfg), probe)
				mustContain(t, r, "AWS-GRANTED-"+tag)
				mustNotContain(t, r, "SIBLING-INSIDE-"+tag)
			})
		})
	}
}

// A protected file created AFTER the sandbox started (moat.New and a first
// command) is as unreadable as one that existed before: at permissive
// level, with the home's protection lifted, and under a grant of the home.
// Control: a file created at the same moment in an unprotected directory of
// the home is read by the same sandbox.
func TestProtectCreatedAfterStart(t *testing.T) {
	h := home(t)
	late := []string{
		".netrc", ".bash_history", ".ssh/id_moat_late", ".aws/credentials", ".config/gh/hosts.yml",
		".local/share/keyrings/login.keyring", ".cargo/credentials.toml", ".kube/config",
		".mozilla/firefox/profiles.ini", ".password-store/moat.gpg",
	}
	for _, c := range protectionConfigs(h) {
		if c.open != "home" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			tag := randomHex(4)
			openDir := plantHomeDir(t, ".moat-late-open-"+tag)
			sb := newSandbox(t, c.cfg(t))
			if r := sh(t, sb, "echo first-ran"); r.Err != nil || !stdoutLine(r, "first-ran") {
				t.Fatalf("the first command failed: %s", r)
			}
			// Now, with the sandbox running, the host creates the files.
			var probe strings.Builder
			var planted []struct{ path, content string }
			for i, rel := range late {
				p := filepath.Join(h, rel)
				if _, err := os.Lstat(p); err == nil {
					t.Logf("%s exists before the test; not probed as created after start", p)
					continue
				}
				content := fmt.Sprintf("LATE-PROTECTED-%d-%s", i, tag)
				plantHome(t, rel, content)
				planted = append(planted, struct{ path, content string }{p, content})
				probe.WriteString("cat " + shq(p) + "; ")
			}
			openFile := filepath.Join(openDir, "late.txt")
			writeFile(t, openFile, "LATE-OPEN-"+tag)
			probe.WriteString("cat " + shq(openFile))

			if len(planted) == 0 {
				t.Fatalf("every late decoy path already exists in %s; nothing to probe", h)
			}
			mustContain(t, hostSh(t, probe.String()), planted[0].content) // control
			r := sh(t, sb, probe.String())
			mustContain(t, r, "LATE-OPEN-"+tag) // control: late files are visible
			for _, p := range planted {
				if strings.Contains(r.Stdout+r.Stderr, p.content) {
					t.Errorf("%s, created after the sandbox started, was read under %s", p.path, c.name)
				}
			}
			if t.Failed() {
				t.Logf("probe output: %s", r)
			}
		})
	}
}

// firstAbsent returns the first of rels that does not exist in the home,
// or skips the test loudly: decoys never replace a user's real files.
func firstAbsent(t *testing.T, rels ...string) string {
	t.Helper()
	for _, rel := range rels {
		if !exists(filepath.Join(home(t), rel)) {
			return rel
		}
	}
	t.Skipf("SKIPPING: %v all exist in %s; the probe needs one it can plant and remove without touching real credentials", rels, home(t))
	return ""
}

// With the home writable (permissive level), sandboxed code moves, links
// and re-spells its way towards a protected file: renaming the protected
// path or a parent of it, hard-linking it, or naming it through
// /proc/self/root, a doubled slash, a detour or a directory descriptor.
// None of it opens the decoy. Control: the same script on the host reads
// it. A parent is only renamed when the test created it, so a real
// ~/.config is never moved.
func TestProtectPermissiveMoveAround(t *testing.T) {
	h := home(t)
	tag := randomHex(4)
	fileRel := firstAbsent(t, ".netrc", ".pgpass", ".vault-token", ".s3cfg", ".boto")
	secretFile := filepath.Join(h, fileRel)
	skipConfig, skipShare := "", ""
	if exists(filepath.Join(h, ".config")) {
		skipConfig = "~/.config is real and is not renamed"
	}
	if exists(filepath.Join(h, ".local", "share")) {
		skipShare = "~/.local/share is real and is not renamed"
	}
	plantHome(t, fileRel, "FILE-MOVE-"+tag)
	ghFile := "moat-hosts-" + tag + ".yml"
	plantHome(t, ".config/gh/"+ghFile, "GH-MOVE-"+tag)
	keyring := "moat-" + tag + ".keyring"
	plantHome(t, ".local/share/keyrings/"+keyring, "KEYRING-MOVE-"+tag)
	moved := func(name string) string { return filepath.Join(h, ".moat-moved-"+name+"-"+tag) }
	restore := func() {
		for _, m := range []struct{ from, to string }{
			{moved("file"), secretFile},
			{moved("config"), filepath.Join(h, ".config")},
			{moved("share"), filepath.Join(h, ".local", "share")},
		} {
			if exists(m.from) && !exists(m.to) {
				os.Rename(m.from, m.to)
			}
		}
		os.Remove(moved("hard"))
	}
	// Put back whatever a successful attack moved, before the decoys' own
	// cleanup runs.
	t.Cleanup(restore)
	probes := []struct {
		name, script, secret string
		skip                 string
	}{
		{"rename protected file", fmt.Sprintf("mv %s %s; cat %s; mv %s %s", secretFile, moved("file"), moved("file"), moved("file"), secretFile), "FILE-MOVE-", ""},
		{"rename parent of protected dir", fmt.Sprintf("mv %s/.config %s; cat %s/gh/%s; mv %s %s/.config", h, moved("config"), moved("config"), ghFile, moved("config"), h), "GH-MOVE-", skipConfig},
		{"rename grandparent of protected dir", fmt.Sprintf("mv %s/.local/share %s; cat %s/keyrings/%s; mv %s %s/.local/share", h, moved("share"), moved("share"), keyring, moved("share"), h), "KEYRING-MOVE-", skipShare},
		{"hard link", fmt.Sprintf("ln %s %s; cat %s; rm -f %s", secretFile, moved("hard"), moved("hard"), moved("hard")), "FILE-MOVE-", ""},
		{"proc self root", "cat /proc/self/root" + secretFile, "FILE-MOVE-", ""},
		{"doubled slashes", "cat /" + strings.ReplaceAll(secretFile, "/", "//"), "FILE-MOVE-", ""},
		{"detour through the parent", "cd " + h + " && cat ./.config/../.config/gh/" + ghFile, "GH-MOVE-", ""},
		{"python openat", fmt.Sprintf(`python3 -c 'import os; d = os.open(%q, os.O_RDONLY); print(os.read(os.open(%q, os.O_RDONLY, dir_fd=d), 100))'`, h, fileRel), "FILE-MOVE-", ""},
	}
	sb := newSandbox(t, levelConfig(moat.IsolationPermissive, nil))
	for _, p := range probes {
		t.Run(p.name, func(t *testing.T) {
			if p.skip != "" {
				t.Skip(p.skip)
			}
			r := sh(t, sb, p.script)
			restore() // for the next probe and the host control
			mustNotContain(t, r, p.secret+tag)
			mustContain(t, hostSh(t, p.script), p.secret+tag) // control
		})
	}
}

// A protected path that is a symbolic link to elsewhere in the home, as
// dotfile managers leave them (~/.ssh -> ~/dotfiles/ssh), is protected by
// what it names, through either spelling. Control: the host reads the key
// through both.
func TestProtectSymlinkedProtectedPath(t *testing.T) {
	h := home(t)
	rel := firstAbsent(t, ".ssh", ".gnupg", ".aws", ".kube", ".azure", ".oci")
	link := filepath.Join(h, rel)
	tag := randomHex(4)
	key := plantHome(t, ".moat-dotfiles-"+tag+"/"+strings.TrimPrefix(rel, ".")+"/id_ed25519", "DOTFILE-KEY-"+tag)
	if err := os.Symlink(filepath.Dir(key), link); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(link) })
	viaLink := filepath.Join(link, "id_ed25519")
	for _, c := range protectionConfigs(h) {
		if c.open != "home" && c.name != "default" {
			continue // the grants of ~/.config and ~/.local need them to exist
		}
		t.Run(c.name, func(t *testing.T) {
			sb, err := moat.New(c.cfg(t))
			if err != nil {
				t.Fatalf("moat.New with a symlinked %s: %v", link, err)
			}
			t.Cleanup(func() { sb.Close() })
			t.Run("via the protected name", func(t *testing.T) {
				r := sh(t, sb, "cat "+viaLink)
				mustNotContain(t, r, "DOTFILE-KEY-"+tag)
				mustContain(t, hostSh(t, "cat "+viaLink), "DOTFILE-KEY-"+tag) // control
			})
			t.Run("via the link's target", func(t *testing.T) {
				r := sh(t, sb, "cat "+key)
				mustNotContain(t, r, "DOTFILE-KEY-"+tag)
				mustContain(t, hostSh(t, "cat "+key), "DOTFILE-KEY-"+tag) // control
			})
		})
	}
}
