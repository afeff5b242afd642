//go:build linux

package escape_test

// Redirection probes: a grant that has become a symbolic link, or another
// object, by the time the sandbox starts is refused with
// moat.ErrGrantRedirected rather than followed; a grant spelled through a
// link is refused at New; and a link planted in a writable place does not
// lead into a protected directory.

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

// redirectFixture is a granted path and what replaces it.
type redirectFixture struct {
	grant   moat.Grant
	probe   string // reads (and may write) through the grant
	read    string // the file the host reads through the grant's path
	replace func(t *testing.T)
	// leaked reports whether the probe's output or the host shows that
	// the sandbox reached the replacement.
	leaked func(r result) bool
	// viaHost is what the host reads through the grant's path after the
	// replacement (the control that the redirect is real).
	viaHost string
}

func mustRename(t *testing.T, from, to string) {
	t.Helper()
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

var redirectCases = []struct {
	name  string
	setup func(t *testing.T, tag string) *redirectFixture
}{
	{"dir replaced by symlink", func(t *testing.T, tag string) *redirectFixture {
		base, target := t.TempDir(), t.TempDir()
		g := filepath.Join(base, "granted")
		writeFile(t, filepath.Join(g, "secret.txt"), "ORIGINAL-"+tag)
		writeFile(t, filepath.Join(target, "secret.txt"), "REDIRECT-"+tag)
		return &redirectFixture{
			grant: moat.Grant{Path: g, Access: moat.READ},
			probe: "cat " + filepath.Join(g, "secret.txt"),
			read:  filepath.Join(g, "secret.txt"),
			replace: func(t *testing.T) {
				mustRename(t, g, g+".orig")
				mustSymlink(t, target, g)
			},
			leaked:  func(r result) bool { return strings.Contains(r.Stdout, "REDIRECT-"+tag) },
			viaHost: "REDIRECT-" + tag,
		}
	}},
	{"dir replaced by another dir", func(t *testing.T, tag string) *redirectFixture {
		base := t.TempDir()
		g := filepath.Join(base, "granted")
		writeFile(t, filepath.Join(g, "secret.txt"), "ORIGINAL-"+tag)
		return &redirectFixture{
			grant: moat.Grant{Path: g, Access: moat.READ},
			probe: "cat " + filepath.Join(g, "secret.txt"),
			read:  filepath.Join(g, "secret.txt"),
			replace: func(t *testing.T) {
				mustRename(t, g, g+".orig")
				writeFile(t, filepath.Join(g, "secret.txt"), "REPLACED-"+tag)
			},
			leaked:  func(r result) bool { return strings.Contains(r.Stdout, "REPLACED-"+tag) },
			viaHost: "REPLACED-" + tag,
		}
	}},
	{"parent replaced by symlink", func(t *testing.T, tag string) *redirectFixture {
		base := t.TempDir()
		g := filepath.Join(base, "p", "granted")
		writeFile(t, filepath.Join(g, "secret.txt"), "ORIGINAL-"+tag)
		writeFile(t, filepath.Join(base, "q", "granted", "secret.txt"), "REDIRECT-"+tag)
		return &redirectFixture{
			grant: moat.Grant{Path: g, Access: moat.READ},
			probe: "cat " + filepath.Join(g, "secret.txt"),
			read:  filepath.Join(g, "secret.txt"),
			replace: func(t *testing.T) {
				mustRename(t, filepath.Join(base, "p"), filepath.Join(base, "p.orig"))
				mustSymlink(t, filepath.Join(base, "q"), filepath.Join(base, "p"))
			},
			leaked:  func(r result) bool { return strings.Contains(r.Stdout, "REDIRECT-"+tag) },
			viaHost: "REDIRECT-" + tag,
		}
	}},
	{"file replaced by symlink", func(t *testing.T, tag string) *redirectFixture {
		base, target := t.TempDir(), t.TempDir()
		f := filepath.Join(base, "granted.txt")
		writeFile(t, f, "ORIGINAL-"+tag)
		writeFile(t, filepath.Join(target, "other.txt"), "REDIRECT-"+tag)
		return &redirectFixture{
			grant: moat.Grant{Path: f, Access: moat.READ},
			probe: "cat " + f,
			read:  f,
			replace: func(t *testing.T) {
				mustRename(t, f, f+".orig")
				mustSymlink(t, filepath.Join(target, "other.txt"), f)
			},
			leaked:  func(r result) bool { return strings.Contains(r.Stdout, "REDIRECT-"+tag) },
			viaHost: "REDIRECT-" + tag,
		}
	}},
	{"write grant replaced by symlink", func(t *testing.T, tag string) *redirectFixture {
		base, target := t.TempDir(), t.TempDir()
		g := filepath.Join(base, "granted")
		writeFile(t, filepath.Join(g, "secret.txt"), "ORIGINAL-"+tag)
		writeFile(t, filepath.Join(target, "secret.txt"), "REDIRECT-"+tag)
		return &redirectFixture{
			grant: moat.Grant{Path: g, Access: moat.WRITE},
			probe: "cat " + filepath.Join(g, "secret.txt") + "; echo WROTE > " + filepath.Join(g, "new-"+tag),
			read:  filepath.Join(g, "secret.txt"),
			replace: func(t *testing.T) {
				mustRename(t, g, g+".orig")
				mustSymlink(t, target, g)
			},
			leaked: func(r result) bool {
				return strings.Contains(r.Stdout, "REDIRECT-"+tag) || exists(filepath.Join(target, "new-"+tag))
			},
			viaHost: "REDIRECT-" + tag,
		}
	}},
}

// A grant replaced between moat.New and the first command (by a symbolic
// link, by another directory, or through a parent turned into a link) makes
// the command fail with ErrGrantRedirected, and nothing of the replacement
// is read or written. Controls: before the replacement, the same grant and
// probe read the original; after it, the host reads the replacement through
// the granted path.
func TestRedirectGrantReplacedBeforeStart(t *testing.T) {
	t.Parallel()
	for _, c := range redirectCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tag := randomHex(4)
			f := c.setup(t, tag)
			cfg := moat.Config{Grants: []moat.Grant{f.grant}}
			mustContain(t, sh(t, newSandbox(t, cfg), f.probe), "ORIGINAL-"+tag) // control
			sb := newSandbox(t, cfg)
			f.replace(t)
			mustContain(t, hostSh(t, "cat "+f.read), f.viaHost) // control: the redirect is real
			r := sh(t, sb, f.probe)
			if f.leaked(r) {
				t.Fatalf("the sandbox followed the replaced grant: %s", r)
			}
			if !errors.Is(r.Err, moat.ErrGrantRedirected) {
				t.Fatalf("want an error matching moat.ErrGrantRedirected from the first command, got %s", r)
			}
		})
	}
}

// A grant replaced after a first command ran is not followed either: the
// next command fails or still sees the original, never the replacement.
func TestRedirectGrantReplacedAfterStart(t *testing.T) {
	t.Parallel()
	for _, c := range redirectCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tag := randomHex(4)
			f := c.setup(t, tag)
			sb := newSandbox(t, moat.Config{Grants: []moat.Grant{f.grant}})
			mustContain(t, sh(t, sb, f.probe), "ORIGINAL-"+tag) // control
			f.replace(t)
			mustContain(t, hostSh(t, "cat "+f.read), f.viaHost) // control
			r := sh(t, sb, f.probe)
			if f.leaked(r) {
				t.Fatalf("the second command followed the replaced grant: %s", r)
			}
			if r.Err != nil && !errors.Is(r.Err, moat.ErrGrantRedirected) && r.Code < 0 {
				t.Errorf("the command failed to start for another reason than a redirect: %s", r)
			}
		})
	}
}

// A grant spelled through a symbolic link, as the path itself or as a
// directory on the way, is refused by New and NewResolvedPath with
// ErrGrantRedirected; ResolvePaths refuses a link inside the writable
// working directory. Control: the resolved path is accepted and read.
func TestRedirectLinkAtNew(t *testing.T) {
	t.Parallel()
	tag := randomHex(4)
	base := t.TempDir()
	real := filepath.Join(base, "real")
	writeFile(t, filepath.Join(real, "sub", "secret.txt"), "LINKED-"+tag)
	link := filepath.Join(base, "link")
	mustSymlink(t, real, link)
	for _, p := range []string{link, filepath.Join(link, "sub"), filepath.Join(link, "sub", "secret.txt")} {
		for _, a := range []moat.Access{moat.READ, moat.WRITE, moat.EXEC} {
			sb, err := moat.New(moat.Config{Grants: []moat.Grant{{Path: p, Access: a}}})
			if err == nil {
				sb.Close()
				t.Errorf("moat.New accepted a %v grant of %s, which goes through a link", a, p)
			} else if !errors.Is(err, moat.ErrGrantRedirected) {
				t.Errorf("moat.New(%v grant of %s): want ErrGrantRedirected, got %v", a, p, err)
			}
		}
		if _, err := moat.NewResolvedPath(p); !errors.Is(err, moat.ErrGrantRedirected) {
			t.Errorf("NewResolvedPath(%s): want ErrGrantRedirected, got %v", p, err)
		}
	}
	// A link in the writable working directory may have been planted by an
	// earlier sandbox: ResolvePaths refuses to follow it.
	wd := t.TempDir()
	mustSymlink(t, real, filepath.Join(wd, "planted"))
	if _, _, err := moat.ResolvePaths(wd, []moat.PathRequest{{Path: filepath.Join(wd, "planted", "sub"), Access: moat.READ}}); !errors.Is(err, moat.ErrGrantRedirected) {
		t.Errorf("ResolvePaths through a link in the working directory: want ErrGrantRedirected, got %v", err)
	}
	// Control: outside writable places the user's own link is resolved,
	// and the resolved path is granted and read.
	_, grants, err := moat.ResolvePaths("", []moat.PathRequest{{Path: filepath.Join(link, "sub"), Access: moat.READ}})
	if err != nil || len(grants) != 1 || grants[0].Path != filepath.Join(real, "sub") {
		t.Fatalf("control: ResolvePaths(%s) = %v, %v; want %s", filepath.Join(link, "sub"), grants, err, filepath.Join(real, "sub"))
	}
	mustContain(t, sh(t, newSandbox(t, moat.Config{Grants: grants}), "cat "+filepath.Join(real, "sub", "secret.txt")), "LINKED-"+tag)
}

// A symbolic link to ~/.ssh, planted in the working directory by the
// sandbox or before it started by the host (a previous run), or in /tmp at
// permissive level, does not open the keys, at any level and under a grant
// of the home. Control: the host reads the key through the same links.
func TestRedirectSymlinkToSSH(t *testing.T) {
	h := home(t)
	tag := randomHex(4)
	keyName := "moat-link-decoy-" + tag
	key := plantHome(t, ".ssh/"+keyName, "SSH-LINK-DECOY-"+tag)
	ssh := filepath.Dir(key)
	secret := "SSH-LINK-DECOY-" + tag
	configs := []protectionConfig{{"strict", func(*testing.T) moat.Config { return moat.Config{} }, ""}}
	for _, c := range protectionConfigs(h) {
		if c.open == "home" || c.name == "default" {
			configs = append(configs, c)
		}
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			t.Run("planted by the sandbox", func(t *testing.T) {
				sb := newSandbox(t, c.cfg(t))
				r := sh(t, sb, "ln -s "+ssh+" ./sshlink && ln -s "+key+" ./keylink && echo LINKED; cat ./sshlink/"+keyName+"; ls -a ./sshlink/; cat ./keylink")
				if !stdoutLine(r, "LINKED") {
					t.Fatalf("the sandbox could not plant the links, so the probe proves nothing: %s", r)
				}
				mustNotContain(t, r, secret)
				if strings.Contains(r.Stdout, keyName) {
					t.Errorf("the sandbox listed ~/.ssh through a link: %s", r)
				}
				mustContain(t, hostSh(t, "cat "+filepath.Join(sb.WorkDir(), "sshlink", keyName)), secret) // control
				mustContain(t, hostSh(t, "cat "+filepath.Join(sb.WorkDir(), "keylink")), secret)          // control
			})
			t.Run("planted by the host before New", func(t *testing.T) {
				w := t.TempDir()
				mustSymlink(t, ssh, filepath.Join(w, "sshlink"))
				mustSymlink(t, key, filepath.Join(w, "keylink"))
				cfg := c.cfg(t)
				cfg.WorkDir = w
				r := sh(t, newSandbox(t, cfg), "cat ./sshlink/"+keyName+"; cat ./keylink; ls -a ./sshlink/")
				mustNotContain(t, r, secret)
				if strings.Contains(r.Stdout, keyName) {
					t.Errorf("the sandbox listed ~/.ssh through a link: %s", r)
				}
				mustContain(t, hostSh(t, "cd "+w+" && cat ./sshlink/"+keyName), secret) // control
			})
		})
	}
	t.Run("planted in /tmp at permissive", func(t *testing.T) {
		l := "/tmp/moat-sshlink-" + tag
		t.Cleanup(func() { os.Remove(l) })
		r := sh(t, newSandbox(t, levelConfig(moat.IsolationPermissive, nil)), "ln -s "+ssh+" "+l+" && echo LINKED; cat "+l+"/"+keyName)
		if !stdoutLine(r, "LINKED") {
			t.Fatalf("permissive could not plant the link in /tmp, so the probe proves nothing: %s", r)
		}
		mustNotContain(t, r, secret)
		// The sandbox's /tmp is its own: the link never reached the host's.
		if exists(l) {
			t.Errorf("a link planted in the sandbox's /tmp appeared in the host's")
		}
		// Control: the same link, planted on the host, opens the key there.
		hl := l + "-host"
		t.Cleanup(func() { os.Remove(hl) })
		mustContain(t, hostSh(t, "ln -s "+ssh+" "+hl+" && cat "+hl+"/"+keyName), secret)
	})
}
