//go:build linux

package escape_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

// The filesystem policy of issue 14: Config.Deny, ReadOnly, Seal,
// VirtualFiles and HideProc. Each probe runs twice: with the field set it
// must fail, and with the field unset (the positive control) the same
// probe must succeed, so that a failure is the policy's doing.

// denied reports whether a probe failed the way a denied path does.
func denied(r result) bool {
	return r.Code != 0 && !strings.Contains(r.Stdout, "ATTACK-OK")
}

// probe is one attack script and what it needs on the host first.
type probe struct {
	name   string
	script string // run in the working directory; prints ATTACK-OK when it got through
}

// runProbes runs each probe in a fresh sandbox made by cfg (with the field
// set) and by control (unset), over a fresh fixture made by setup.
func runProbes(t *testing.T, probes []probe, setup func(t *testing.T) string, cfg, control func(dir string) moat.Config, after func(t *testing.T, dir string)) {
	t.Helper()
	for _, p := range probes {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			dir := setup(t)
			sb, err := moat.New(cfg(dir))
			if err != nil {
				t.Fatalf("moat.New: %v", err)
			}
			r := sh(t, sb, "cd "+shq(dir)+" && "+p.script)
			if err := sb.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if !denied(r) {
				t.Errorf("the probe got through: %s", r)
			}
			if after != nil {
				after(t, dir)
			}
			cdir := setup(t)
			c := sh(t, newSandbox(t, control(cdir)), "cd "+shq(cdir)+" && "+p.script)
			if !stdoutLine(c, "ATTACK-OK") {
				t.Fatalf("control: with the field unset the probe fails too, so it proves nothing: %s", c)
			}
		})
	}
}

// denyFixture is a supplied working directory with a secret file, a secret
// directory and a public file.
func denyFixture(t *testing.T) string {
	d := t.TempDir()
	writeFile(t, filepath.Join(d, "secret.txt"), "SECRET-FILE\n")
	writeFile(t, filepath.Join(d, "secretdir", "a.txt"), "SECRET-DIR\n")
	writeFile(t, filepath.Join(d, "public.txt"), "public\n")
	return d
}

// Denied paths of a supplied working directory can be neither read,
// listed, written, removed, renamed nor executed; the rest of the
// directory still works.
func TestDenyPaths(t *testing.T) {
	t.Parallel()
	need(t, "python3")
	probes := []probe{
		{"cat file", `cat secret.txt && echo ATTACK-OK`},
		{"cat in dir", `cat secretdir/a.txt && echo ATTACK-OK`},
		{"list dir", `ls secretdir | grep -q a.txt && echo ATTACK-OK`},
		{"find dir", `find secretdir | grep -q a.txt && echo ATTACK-OK`},
		{"python read", `python3 -c 'print(open("secret.txt").read())' && echo ATTACK-OK`},
		{"overwrite", `echo evil > secret.txt && echo ATTACK-OK`},
		{"append", `echo evil >> secret.txt && echo ATTACK-OK`},
		{"truncate", `truncate -s 0 secret.txt && echo ATTACK-OK`},
		{"remove", `rm -f secret.txt && test ! -e secret.txt && echo ATTACK-OK`},
		{"rename", `mv secret.txt moved.txt && echo ATTACK-OK`},
		{"rename dir", `mv secretdir moved && echo ATTACK-OK`},
		{"write in dir", `echo evil > secretdir/new.txt && echo ATTACK-OK`},
		{"hard link", `ln secret.txt alias.txt && cat alias.txt && echo ATTACK-OK`},
		{"copy", `cp secret.txt /tmp/x && cat /tmp/x && echo ATTACK-OK`},
	}
	deny := func(d string) moat.Config {
		return moat.Config{WorkDir: d, Deny: []string{filepath.Join(d, "secret.txt"), filepath.Join(d, "secretdir")}}
	}
	control := func(d string) moat.Config { return moat.Config{WorkDir: d} }
	runProbes(t, probes, denyFixture, deny, control, func(t *testing.T, d string) {
		if b, err := os.ReadFile(filepath.Join(d, "secret.txt")); err != nil || string(b) != "SECRET-FILE\n" {
			t.Errorf("after the run the secret file is %q, %v", b, err)
		}
		if b, err := os.ReadFile(filepath.Join(d, "secretdir", "a.txt")); err != nil || string(b) != "SECRET-DIR\n" {
			t.Errorf("after the run the secret directory's file is %q, %v", b, err)
		}
	})
	t.Run("EACCES", func(t *testing.T) {
		t.Parallel()
		d := denyFixture(t)
		sb := newSandbox(t, deny(d))
		r := python(t, sb, `
import errno, os, sys
d = sys.argv[1] if len(sys.argv) > 1 else `+"'"+d+"'"+`
for p in ("secret.txt", "secretdir/a.txt"):
    try:
        open(os.path.join(d, p)).read()
        print("READ", p)
    except OSError as e:
        print(p, errno.errorcode[e.errno])
try:
    os.listdir(os.path.join(d, "secretdir"))
    print("LISTED")
except OSError as e:
    print("secretdir", errno.errorcode[e.errno])
print(open(os.path.join(d, "public.txt")).read().strip())
`)
		for _, want := range []string{"secret.txt EACCES", "secretdir/a.txt EACCES", "secretdir EACCES", "public"} {
			mustContain(t, r, want)
		}
	})
	t.Run("rest of the working directory", func(t *testing.T) {
		t.Parallel()
		d := denyFixture(t)
		writeFile(t, filepath.Join(d, "sub", "f.txt"), "x\n")
		r := sh(t, newSandbox(t, deny(d)), "cd "+shq(d)+" && cat public.txt && echo more >> public.txt && echo new > sub/g.txt && rm sub/f.txt && echo DONE")
		if !stdoutLine(r, "DONE") {
			t.Fatalf("the rest of the working directory is no longer usable: %s", r)
		}
	})
}

// A grant of a path inside a denied directory wins: a read grant restores
// one file, its siblings stay denied. A denied path inside a granted
// directory beats the grant.
func TestDenyAndGrants(t *testing.T) {
	t.Parallel()
	g := t.TempDir()
	writeFile(t, filepath.Join(g, "keep", "open.txt"), "OPEN\n")
	writeFile(t, filepath.Join(g, "keep", "closed.txt"), "CLOSED\n")
	writeFile(t, filepath.Join(g, "inner.txt"), "INNER\n")
	cfg := moat.Config{
		Grants: []moat.Grant{{Path: g, Access: moat.READ}, {Path: filepath.Join(g, "keep", "open.txt"), Access: moat.READ}},
		Deny:   []string{filepath.Join(g, "keep"), filepath.Join(g, "inner.txt")},
	}
	r := sh(t, newSandbox(t, cfg), "cd "+shq(g)+"; cat keep/open.txt; cat keep/closed.txt; cat inner.txt; echo END")
	mustContain(t, r, "OPEN")
	mustNotContain(t, r, "CLOSED")
	mustNotContain(t, r, "INNER")
	// Control: without Deny the parent grant shows both.
	c := sh(t, newSandbox(t, moat.Config{Grants: cfg.Grants}), "cd "+shq(g)+"; cat keep/closed.txt; cat inner.txt")
	mustContain(t, c, "CLOSED")
	mustContain(t, c, "INNER")
}

// A denied path reached through a symbolic link is denied at its target
// too: Landlock holds on objects, not spellings.
func TestDenySymlinkTarget(t *testing.T) {
	t.Parallel()
	g := t.TempDir()
	writeFile(t, filepath.Join(g, "real", "secret.txt"), "LINKED-SECRET\n")
	w := t.TempDir()
	if err := os.Symlink(filepath.Join(g, "real"), filepath.Join(w, "link")); err != nil {
		t.Fatal(err)
	}
	grants := []moat.Grant{{Path: g, Access: moat.READ}}
	cfg := moat.Config{WorkDir: w, Grants: grants, Deny: []string{filepath.Join(w, "link")}}
	script := "cat " + shq(filepath.Join(g, "real", "secret.txt")) + "; cat " + shq(filepath.Join(w, "link", "secret.txt"))
	r := sh(t, newSandbox(t, cfg), script)
	mustNotContain(t, r, "LINKED-SECRET")
	c := sh(t, newSandbox(t, moat.Config{WorkDir: w, Grants: grants}), script)
	mustContain(t, c, "LINKED-SECRET")
}

// A denied path beats the permissive level, which shows the whole host.
func TestDenyPermissive(t *testing.T) {
	t.Parallel()
	p := plantHome(t, ".moat-test-deny-"+randomHex(4)+"/secret.txt", "PERMISSIVE-SECRET\n")
	cfg := levelConfig(moat.IsolationPermissive, homeOpen)
	c := sh(t, newSandbox(t, cfg), "cat "+shq(p))
	mustContain(t, c, "PERMISSIVE-SECRET") // control
	cfg.Deny = []string{filepath.Dir(p)}
	r := sh(t, newSandbox(t, cfg), "cat "+shq(p)+"; ls "+shq(filepath.Dir(p))+"; echo evil > "+shq(p))
	mustNotContain(t, r, "PERMISSIVE-SECRET")
	if strings.Contains(r.Stdout, "secret.txt") {
		t.Errorf("the denied directory can be listed: %s", r)
	}
	if b, _ := os.ReadFile(p); string(b) != "PERMISSIVE-SECRET\n" {
		t.Errorf("the denied file changed: %q", b)
	}
}

// A denied path that does not exist when New runs cannot be created by
// the sandbox, is unreadable when the host creates it later, and nothing
// is left on the host to guard it.
func TestDenyCreatedAfterStart(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T) string {
		d := t.TempDir()
		writeFile(t, filepath.Join(d, "sub", "keep.txt"), "keep\n")
		return d
	}
	deny := func(d string) moat.Config {
		return moat.Config{WorkDir: d, Deny: []string{filepath.Join(d, "later.txt"), filepath.Join(d, "laterdir", "x"), filepath.Join(d, "sub", "later.txt")}}
	}
	control := func(d string) moat.Config { return moat.Config{WorkDir: d} }
	probes := []probe{
		{"create file", `echo x > later.txt && echo ATTACK-OK`},
		{"create in subdir", `echo x > sub/later.txt && echo ATTACK-OK`},
		{"create parents", `mkdir -p laterdir && echo x > laterdir/x && echo ATTACK-OK`},
		{"rename into place", `echo x > sub/tmp.txt; mv sub/tmp.txt later.txt && echo ATTACK-OK`},
		{"symlink", `ln -s /etc/hostname later.txt && echo ATTACK-OK`},
	}
	runProbes(t, probes, setup, deny, control, func(t *testing.T, d string) {
		for _, p := range []string{"later.txt", "laterdir", "sub/later.txt"} {
			if exists(filepath.Join(d, p)) {
				t.Errorf("%s exists on the host after the run", p)
			}
		}
	})
	t.Run("created by the host", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		sb := newSandbox(t, deny(d))
		// During the run a missing denied path whose parent exists holds a
		// guard: a marked placeholder directory, masked in the sandbox
		// (host_denyguard_linux.go). What the host puts there, and a
		// denied path it creates with its parent, stay unreadable.
		for _, g := range []string{"later.txt", "sub/later.txt"} {
			m, _ := filepath.Glob(filepath.Join(d, g, ".moat-placeholder.*"))
			if len(m) != 1 {
				t.Errorf("no guard at %s during the run: %v", g, m)
				continue
			}
			if b, err := os.ReadFile(m[0]); err != nil || !strings.HasPrefix(string(b), "# moat placeholder") {
				t.Errorf("no guard at %s during the run: %q, %v", g, b, err)
			}
		}
		writeFile(t, filepath.Join(d, "later.txt", "host.txt"), "HOST-LATER\n")
		writeFile(t, filepath.Join(d, "sub", "later.txt", "host.txt"), "HOST-LATER-SUB\n")
		writeFile(t, filepath.Join(d, "laterdir", "x", "host.txt"), "HOST-LATER-DEEP\n")
		r := sh(t, sb, "cd "+shq(d)+"; cat later.txt/host.txt; cat sub/later.txt/host.txt; cat laterdir/x/host.txt; cat sub/keep.txt")
		mustNotContain(t, r, "HOST-LATER")
		mustContain(t, r, "keep")
		sb.Close()
		// The host's files stay; the guard's marker goes.
		fileIs(t, filepath.Join(d, "later.txt", "host.txt"), "HOST-LATER\n")
		fileIs(t, filepath.Join(d, "laterdir", "x", "host.txt"), "HOST-LATER-DEEP\n")
		if m, _ := filepath.Glob(filepath.Join(d, "later.txt", ".moat-placeholder*")); len(m) > 0 {
			t.Errorf("the guard's marker is left in the host's directory: %v", m)
		}
		// Control: without Deny the host's new files are readable.
		c := sh(t, newSandbox(t, control(d)), "cd "+shq(d)+"; cat later.txt/host.txt laterdir/x/host.txt")
		mustContain(t, c, "HOST-LATER")
		mustContain(t, c, "HOST-LATER-DEEP")
	})
	t.Run("nothing left after Close", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		before := snapshot(d)
		newSandbox(t, deny(d)).Close()
		if now := snapshot(d); now != before {
			t.Errorf("Close left something in the working directory: %s (was %s)", now, before)
		}
	})
}

// ReadOnly paths of a supplied working directory stay readable, but cannot
// be changed, removed, replaced or created.
func TestReadOnlyPaths(t *testing.T) {
	t.Parallel()
	need(t, "python3")
	setup := func(t *testing.T) string {
		d := t.TempDir()
		writeFile(t, filepath.Join(d, "conf.txt"), "CONF\n")
		writeFile(t, filepath.Join(d, "confdir", "a.txt"), "A\n")
		writeFile(t, filepath.Join(d, "nested", "deep", "n.txt"), "N\n")
		writeFile(t, filepath.Join(d, "other", "o.txt"), "O\n")
		return d
	}
	ro := func(d string) moat.Config {
		return moat.Config{WorkDir: d, ReadOnly: []string{
			filepath.Join(d, "conf.txt"), filepath.Join(d, "confdir"), filepath.Join(d, "nested", "deep", "n.txt"),
			filepath.Join(d, "other", "missing.txt"),
		}}
	}
	control := func(d string) moat.Config { return moat.Config{WorkDir: d} }
	probes := []probe{
		{"append", `echo evil >> conf.txt && echo ATTACK-OK`},
		{"overwrite", `echo evil > conf.txt && echo ATTACK-OK`},
		{"truncate", `: > conf.txt && grep -qv CONF conf.txt; test ! -s conf.txt && echo ATTACK-OK`},
		{"remove", `rm -f conf.txt && test ! -e conf.txt && echo ATTACK-OK`},
		{"replace by rename", `echo evil > new.tmp && mv new.tmp conf.txt && echo ATTACK-OK`},
		{"python", `python3 -c 'open("conf.txt", "a").write("evil")' && echo ATTACK-OK`},
		{"chmod", `chmod 0777 conf.txt && echo ATTACK-OK`},
		{"write in dir", `echo evil > confdir/new.txt && echo ATTACK-OK`},
		{"change in dir", `echo evil >> confdir/a.txt && echo ATTACK-OK`},
		{"remove dir", `rm -rf confdir && test ! -e confdir && echo ATTACK-OK`},
		{"rename parent", `mv nested nested.old && mkdir -p nested/deep && echo evil > nested/deep/n.txt && echo ATTACK-OK`},
		{"rename deep parent", `mv nested/deep nested/deep.old && mkdir nested/deep && echo evil > nested/deep/n.txt && echo ATTACK-OK`},
		{"create missing", `echo evil > other/missing.txt && echo ATTACK-OK`},
	}
	runProbes(t, probes, setup, ro, control, func(t *testing.T, d string) {
		for p, want := range map[string]string{"conf.txt": "CONF\n", "confdir/a.txt": "A\n", "nested/deep/n.txt": "N\n"} {
			if b, err := os.ReadFile(filepath.Join(d, p)); err != nil || string(b) != want {
				t.Errorf("after the run %s is %q, %v", p, b, err)
			}
		}
		if exists(filepath.Join(d, "other", "missing.txt")) || exists(filepath.Join(d, "confdir", "new.txt")) {
			t.Errorf("a read-only path was created: %s", snapshot(d))
		}
	})
	t.Run("readable and the rest writable", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		r := sh(t, newSandbox(t, ro(d)), "cd "+shq(d)+" && cat conf.txt confdir/a.txt && echo more >> other/o.txt && echo new > nested/new.txt && echo DONE")
		mustContain(t, r, "CONF")
		if !stdoutLine(r, "DONE") {
			t.Fatalf("the rest of the working directory is not writable: %s", r)
		}
	})
}

// Git still works in a working directory with read-only and denied paths.
func TestFilesystemPolicyGitWorks(t *testing.T) {
	t.Parallel()
	need(t, "git")
	d := t.TempDir()
	newHostRepo(t, d)
	writeFile(t, filepath.Join(d, "README.md"), "readme\n")
	writeFile(t, filepath.Join(d, ".env"), "TOKEN=secret\n")
	writeFile(t, filepath.Join(d, "main.go"), "package main\n")
	hostGit(t, d, "add", "README.md", "main.go")
	hostGit(t, d, "-c", "user.name=a", "-c", "user.email=b@example.invalid", "commit", "-q", "-m", "files")
	cfg := moat.Config{WorkDir: d, ReadOnly: []string{filepath.Join(d, "README.md")}, Deny: []string{filepath.Join(d, ".env")}}
	sb := newSandbox(t, cfg)
	r := sh(t, sb, "cd "+shq(d)+` && git status --short && echo '// more' >> main.go && git add main.go && git -c user.name=a -c user.email=b@example.invalid commit -q -m sandboxed && git log --oneline | wc -l && echo GIT-OK`)
	if !stdoutLine(r, "GIT-OK") {
		t.Fatalf("git status/add/commit fail with ReadOnly and Deny set: %s", r)
	}
	if n := commitCount(t, d); n != "3" {
		t.Errorf("the host repository has %s commits, want 3", n)
	}
}

// Entries created in a sealed directory after New are neither readable
// nor writable; entries that existed keep their access.
func TestSealNewEntries(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T) string {
		d := t.TempDir()
		writeFile(t, filepath.Join(d, "sealed", "old.txt"), "OLD\n")
		writeFile(t, filepath.Join(d, "sealed", "olddir", "x.txt"), "X\n")
		return d
	}
	seal := func(d string) moat.Config {
		return moat.Config{WorkDir: d, Seal: []string{filepath.Join(d, "sealed")}}
	}
	control := func(d string) moat.Config { return moat.Config{WorkDir: d} }
	runProbes(t, []probe{
		{"create", `echo x > sealed/mine.txt && echo ATTACK-OK`},
		{"mkdir", `mkdir sealed/minedir && echo ATTACK-OK`},
		{"rename in", `echo x > in.txt && mv in.txt sealed/in.txt && echo ATTACK-OK`},
	}, setup, seal, control, nil)
	t.Run("created by the host", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		sb := newSandbox(t, seal(d))
		writeFile(t, filepath.Join(d, "sealed", "new.txt"), "HOST-NEW\n")
		writeFile(t, filepath.Join(d, "sealed", "newdir", "y.txt"), "HOST-NEWDIR\n")
		r := sh(t, sb, "cd "+shq(d)+"/sealed; cat new.txt; cat newdir/y.txt; echo x > newdir/z.txt; cat old.txt; echo more >> old.txt && cat olddir/x.txt && echo x > olddir/new.txt && echo EXISTING-OK")
		mustNotContain(t, r, "HOST-NEW")
		mustContain(t, r, "OLD")
		if !stdoutLine(r, "EXISTING-OK") {
			t.Errorf("the entries that existed at New lost their access: %s", r)
		}
		if exists(filepath.Join(d, "sealed", "newdir", "z.txt")) {
			t.Errorf("the sandbox wrote in a directory the host created after New")
		}
		c := sh(t, newSandbox(t, control(d)), "cd "+shq(d)+"/sealed; cat new.txt newdir/y.txt")
		mustContain(t, c, "HOST-NEWDIR") // control
	})
}

// Virtual files show their contents, read-only, in the sandbox only:
// over an existing file, in a private directory, and in a directory that
// exists nowhere on the host.
func TestVirtualFiles(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"/etc/passwd":                   "nobody:x:65534:65534:Nobody:/nonexistent:/usr/sbin/nologin\n",
		"/tmp/heimdall-virtual":         "virtual\n",
		"/moat-virtual-test/deep/v.txt": "deep virtual\n",
	}
	sb := newSandbox(t, moat.Config{VirtualFiles: files})
	for p, want := range files {
		r := sh(t, sb, "cat "+shq(p))
		if r.Stdout != want {
			t.Errorf("%s reads %q, want %q: %s", p, r.Stdout, want, r)
		}
		if w := sh(t, sb, "echo evil > "+shq(p)+" && echo ATTACK-OK; echo evil >> "+shq(p)+" && echo ATTACK-OK; rm -f "+shq(p)+" && echo ATTACK-OK"); strings.Contains(w.Stdout, "ATTACK-OK") {
			t.Errorf("%s is writable: %s", p, w)
		}
		if r := sh(t, sb, "cat "+shq(p)); r.Stdout != want {
			t.Errorf("%s changed to %q", p, r.Stdout)
		}
	}
	if exists("/moat-virtual-test") {
		t.Errorf("a virtual file's directory exists on the host")
	}
	// Control: without them the sandbox sees the host's passwd and no
	// others.
	c := sh(t, newSandbox(t, moat.Config{}), "cat /etc/passwd; cat /moat-virtual-test/deep/v.txt; cat /tmp/heimdall-virtual")
	mustContain(t, c, "root:")
	if strings.Contains(c.Stdout, "virtual") {
		t.Fatalf("control: the sandbox sees a virtual file's contents without VirtualFiles: %s", c)
	}
	t.Run("host directory", func(t *testing.T) {
		t.Parallel()
		d := t.TempDir()
		// A missing file in a host directory: shown through a
		// read-only overlay of the directory, never made on the host.
		writeFile(t, filepath.Join(d, "old.txt"), "old\n")
		nsb := newSandbox(t, moat.Config{WorkDir: d, VirtualFiles: map[string]string{filepath.Join(d, "new.txt"): "x"}})
		r := sh(t, nsb, "cat new.txt; echo evil > new.txt && echo ATTACK-OK; rm -f new.txt && echo ATTACK-OK; echo edited > old.txt && echo OLD-EDITED")
		if r.Stdout != "xOLD-EDITED\n" {
			t.Errorf("a virtual file missing in the working directory: %s; want its content, read-only, and the other files writable", r)
		}
		nsb.Close()
		if exists(filepath.Join(d, "new.txt")) {
			t.Errorf("the virtual file was created on the host")
		}
		// One whose directory is missing there too is refused: its
		// directory would have to be made on the host.
		_, err := moat.New(moat.Config{WorkDir: d, VirtualFiles: map[string]string{filepath.Join(d, "nodir", "new.txt"): "x"}})
		if err == nil || !strings.Contains(err.Error(), "virtual file") {
			t.Fatalf("a virtual file whose directory would have to be created in the working directory: New = %v", err)
		}
		if exists(filepath.Join(d, "nodir")) {
			t.Errorf("the refused virtual file's directory was created on the host")
		}
		for _, p := range []string{"/dev/moat-virtual", "/proc/moat-virtual", "/sys/moat-virtual"} {
			if sb, err := moat.New(moat.Config{VirtualFiles: map[string]string{p: "x"}}); err == nil {
				sb.Close()
				t.Errorf("a virtual file in %s, which the sandbox's own mounts would hide: New succeeded", p)
			}
		}
		writeFile(t, filepath.Join(d, "real.txt"), "real\n")
		sb := newSandbox(t, moat.Config{WorkDir: d, VirtualFiles: map[string]string{filepath.Join(d, "real.txt"): "virtual\n"}})
		r = sh(t, sb, "cat "+shq(filepath.Join(d, "real.txt"))+"; echo evil > "+shq(filepath.Join(d, "real.txt")))
		mustContain(t, r, "virtual")
		if b, _ := os.ReadFile(filepath.Join(d, "real.txt")); string(b) != "real\n" {
			t.Errorf("the host file under a virtual one changed: %q", b)
		}
	})
}

// With HideProc the sandbox has no /proc.
func TestHideProc(t *testing.T) {
	t.Parallel()
	script := `ls /proc/self/status >/dev/null && echo ATTACK-OK; cat /proc/1/cmdline >/dev/null && echo ATTACK-OK; ls /proc | grep -q . && echo ATTACK-OK`
	r := sh(t, newSandbox(t, moat.Config{HideProc: true}), script)
	if strings.Contains(r.Stdout, "ATTACK-OK") {
		t.Errorf("/proc is visible with HideProc: %s", r)
	}
	c := sh(t, newSandbox(t, moat.Config{}), script)
	if strings.Count(c.Stdout, "ATTACK-OK") != 3 {
		t.Fatalf("control: /proc is not visible without HideProc: %s", c)
	}
}
