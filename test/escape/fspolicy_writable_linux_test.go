//go:build linux

package escape_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
)

// Denied paths inside writable places, with a mount namespace: the mask
// alone holds them (an existing one's, or a placeholder's for a missing
// one), so the place keeps its right to create and remove entries. These
// attack the masks where no Landlock carve backs them up.

// TestPolicyWorkloadWithDeniedEnv: with `writable: ["."]` and `deny:
// [".env"]` (an existing .env), real tools create new top-level files and
// directories in the cwd, while .env stays EACCES. Control: without the
// deny, .env is read.
func TestPolicyWorkloadWithDeniedEnv(t *testing.T) {
	t.Parallel()
	need(t, "cc", "python3", "make")
	layout := fsLayout{
		"C/.env":     "ENV-SECRET\n",
		"C/main.c":   "int main(void) { return 0; }\n",
		"C/Makefile": "out/stamp:\n\tmkdir -p out && echo built > out/stamp\n",
	}
	script := `mkdir target && echo x > target/a && echo new > newfile.txt && cc -o app main.c && make -s && ` +
		`python3 -m venv --without-pip venv && test -e venv/bin/python3 && rm newfile.txt && printf workload-ok:; ` +
		`python3 -c 'import errno
try:
    print(open(".env").read().strip(), end="")
except OSError as e:
    print(errno.errorcode[e.errno], end="")'`
	check := func(t *testing.T, c, h string) {
		fileIs(t, filepath.Join(c, "target/a"), "x\n")
		fileIs(t, filepath.Join(c, "out/stamp"), "built\n")
		fileIs(t, filepath.Join(c, ".env"), "ENV-SECRET\n")
		present(t, filepath.Join(c, "app"), filepath.Join(c, "venv/bin/python3"))
		absent(t, filepath.Join(c, "newfile.txt"))
	}
	fc := fsCase{layout: layout, script: script}
	t.Run("policy", func(t *testing.T) {
		fc.exec(t, fsRun{writ: []string{"."}, deny: []string{".env"}, want: "workload-ok:EACCES", check: check}, nil)
	})
	t.Run("control", func(t *testing.T) {
		fc.exec(t, fsRun{writ: []string{"."}, want: "workload-ok:ENV-SECRET", check: check}, nil)
	})
}

// maskFixture is a supplied working directory with a secret file, a
// secret directory and a secret two levels down.
func maskFixture(t *testing.T) string {
	d := denyFixture(t)
	writeFile(t, filepath.Join(d, "sub", "deep", "secret.txt"), "SECRET-DEEP\n")
	return d
}

// TestDenyMaskInWritablePlace: nothing the sandbox may do in its writable
// working directory lifts the mask of a denied path there: not chmod,
// unlink, rename (of it, over it, or of a directory on the way), umount,
// nor a mount namespace of its own. Each probe tries its bypass and then
// reads; the control (no deny) reads.
func TestDenyMaskInWritablePlace(t *testing.T) {
	t.Parallel()
	read := `cat secret.txt secretdir/a.txt sub/deep/secret.txt 2>/dev/null | grep -c SECRET | grep -qx 3 && echo ATTACK-OK`
	probes := []probe{
		{"chmod", `chmod 644 secret.txt; chmod 755 secretdir; chmod 755 sub/deep/secret.txt; ` + read},
		{"unlink and recreate", `rm -f secret.txt; rm -rf secretdir; echo SECRET > secret.txt; mkdir -p secretdir && echo SECRET > secretdir/a.txt; ` + read},
		{"rename away", `mv secret.txt s2 && mv s2 secret.txt; mv secretdir d2 && mv d2 secretdir; (mv secret.txt x && cat x && mv secretdir y && cat y/a.txt && cat sub/deep/secret.txt) 2>/dev/null | grep -c SECRET | grep -qx 3 && echo ATTACK-OK`},
		{"rename over", `echo SECRET > o1 && echo SECRET > o2 && mv -f o1 secret.txt; mv -f o2 sub/deep/secret.txt; mkdir -p o3 && echo SECRET > o3/a.txt && mv -T o3 secretdir; ` + read},
		{"rename a directory on the way", `(mv sub sub2 && cat sub2/deep/secret.txt || mv sub/deep deep2 && cat deep2/secret.txt) 2>/dev/null | grep -q SECRET && echo ATTACK-OK`},
		{"umount", `umount secret.txt; umount -l secretdir; umount -l sub/deep/secret.txt; ` + read},
		{"own mount namespace", `unshare -Urm sh -c 'umount -l secret.txt; umount -l secretdir; umount -l sub/deep/secret.txt; ` + strings.ReplaceAll(read, `'`, ``) + `' 2>/dev/null | grep -q ATTACK-OK && echo ATTACK-OK; ` + read},
	}
	deny := func(d string) moat.Config {
		return moat.Config{WorkDir: d, Deny: []string{filepath.Join(d, "secret.txt"), filepath.Join(d, "secretdir"), filepath.Join(d, "sub", "deep", "secret.txt")}}
	}
	control := func(d string) moat.Config { return moat.Config{WorkDir: d} }
	runProbes(t, probes, maskFixture, deny, control, func(t *testing.T, d string) {
		for rel, want := range map[string]string{"secret.txt": "SECRET-FILE\n", "secretdir/a.txt": "SECRET-DIR\n", "sub/deep/secret.txt": "SECRET-DEEP\n"} {
			if b, err := os.ReadFile(filepath.Join(d, rel)); err != nil || string(b) != want {
				t.Errorf("after the run %s is %q, %v", rel, b, err)
			}
		}
	})
	// The errors say what refuses: DAC (the mask's mode 0000, for the
	// sandbox's own uid), the read-only mount, the mount point.
	t.Run("errors", func(t *testing.T) {
		t.Parallel()
		need(t, "python3")
		d := maskFixture(t)
		r := python(t, newSandbox(t, deny(d)), `
import errno, os
os.chdir(`+"'"+d+"'"+`)
def try_(name, f):
    try:
        f()
        print(name, "OK")
    except OSError as e:
        print(name, errno.errorcode[e.errno])
try_("read", lambda: open("secret.txt").read())
try_("list", lambda: os.listdir("secretdir"))
try_("chmod", lambda: os.chmod("secret.txt", 0o644))
try_("chmoddir", lambda: os.chmod("secretdir", 0o755))
try_("unlink", lambda: os.unlink("secret.txt"))
try_("rename", lambda: os.rename("secretdir", "x"))
try_("pin", lambda: os.rename("sub", "x"))
try_("new", lambda: open("newfile", "w").write("x"))
print("uid", os.getuid(), "mode", oct(os.stat("secretdir").st_mode & 0o777))
`)
		for _, want := range []string{"read EACCES", "list EACCES", "chmod EROFS", "chmoddir EROFS", "unlink EBUSY", "rename EBUSY", "pin EBUSY", "new OK", "mode 0o0"} {
			mustContain(t, r, want)
		}
	})
}

// TestMissingDenyGuard: a denied path missing at New inside a writable
// place cannot be created, however the sandbox tries, while the place
// keeps taking new entries; nothing is left on the host afterwards.
// Control: without the deny the same probes create it.
func TestMissingDenyGuard(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T) string {
		d := t.TempDir()
		writeFile(t, filepath.Join(d, "work", "old.txt"), "old\n")
		return d
	}
	write := `echo x > work/blocked/f && cat work/blocked/f | grep -q x && echo ATTACK-OK`
	probes := []probe{
		{"mkdir", `mkdir work/blocked && echo ATTACK-OK`},
		{"mkdir -p and write", `mkdir -p work/blocked; ` + write},
		{"remove the guard first", `rmdir work/blocked; rm -rf work/blocked; mkdir -p work/blocked; ` + write},
		{"rename the guard away", `mv work/blocked work/b2; mkdir -p work/blocked; ` + write},
		{"rename its directory", `mv work work2 && mkdir -p work/blocked && ` + write},
		{"chmod", `chmod 755 work/blocked; ` + `mkdir -p work/blocked; ` + write},
		{"umount", `umount -l work/blocked; mkdir -p work/blocked; ` + write},
		{"a file in its place", `rm -rf work/blocked; echo x > work/blocked && grep -q x work/blocked && echo ATTACK-OK`},
	}
	cfg := func(d string) moat.Config {
		return moat.Config{WorkDir: d, Deny: []string{filepath.Join(d, "work", "blocked")}}
	}
	control := func(d string) moat.Config { return moat.Config{WorkDir: d} }
	runProbes(t, probes, setup, cfg, control, func(t *testing.T, d string) {
		absent(t, filepath.Join(d, "work", "blocked"))
		fileIs(t, filepath.Join(d, "work", "old.txt"), "old\n")
	})
	t.Run("the directory stays writable", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		sb := newSandbox(t, cfg(d))
		r := sh(t, sb, "cd "+shq(d)+" && echo new > work/new.txt && mkdir work/newdir && rm work/old.txt && echo DONE")
		sb.Close()
		if !stdoutLine(r, "DONE") {
			t.Fatalf("the directory holding a guard is no longer writable: %s", r)
		}
		fileIs(t, filepath.Join(d, "work", "new.txt"), "new\n")
		absent(t, filepath.Join(d, "work", "blocked"), filepath.Join(d, "work", "old.txt"))
	})
}

// TestDeepMissingDenyGuard: a denied path whose parent is missing too is
// guarded the same way (the directories on the way are made for the run),
// so the place's top stays writable; Close removes what is left empty.
// Control: without the deny the path is created.
func TestDeepMissingDenyGuard(t *testing.T) {
	t.Parallel()
	script := `echo x > top.txt && mkdir newdir && mkdir -p new/deeper/blocked; echo x > new/deeper/blocked/f 2>/dev/null && printf made: || printf blocked:; echo DONE`
	for _, tc := range []struct {
		name, want string
		deny       bool
	}{{"deny", "blocked:DONE", true}, {"control: no deny", "made:DONE", false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := t.TempDir()
			cfg := moat.Config{WorkDir: d}
			if tc.deny {
				cfg.Deny = []string{filepath.Join(d, "new", "deeper", "blocked")}
			}
			sb := newSandbox(t, cfg)
			if tc.deny && !exists(filepath.Join(d, "new", "deeper", "blocked")) {
				t.Errorf("no guard during the run")
			}
			r := sh(t, sb, "cd "+shq(d)+" && "+script)
			sb.Close()
			if strings.TrimSpace(r.Stdout) != tc.want {
				t.Fatalf("want %q: %s", tc.want, r)
			}
			fileIs(t, filepath.Join(d, "top.txt"), "x\n")
			if tc.deny {
				absent(t, filepath.Join(d, "new", "deeper", "blocked"))
			} else {
				fileIs(t, filepath.Join(d, "new", "deeper", "blocked", "f"), "x\n")
			}
			// Nothing written on the way: Close removes what it made.
			if tc.deny {
				newSandbox(t, cfg).Close()
				absent(t, filepath.Join(d, "new"))
			}
		})
	}
}

// guardRoleEnv makes the test binary create a sandbox denying a missing
// path of the directory it names, say so, and wait to be killed.
const guardRoleEnv = "MOAT_ESCAPE_GUARD_ROLE"

func init() {
	dir := os.Getenv(guardRoleEnv)
	if dir == "" {
		return
	}
	sb, err := moat.New(moat.Config{WorkDir: dir, Deny: []string{filepath.Join(dir, "blocked")}})
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	if err := sb.Command("true").Run(); err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	fmt.Println("READY")
	select {}
}

// TestStaleDenyGuardRemoved: after a SIGKILL of moat its guard
// placeholder stays behind; the next run that denies the path removes it
// (and guards it afresh), leaves alone one of a sandbox still running, and
// never removes a directory of the user's. Control: right after the kill
// the placeholder is there.
func TestStaleDenyGuardRemoved(t *testing.T) {
	isolateState(t) // not parallel: any New sweeps a killed run (controljournal_linux_test.go)
	d := t.TempDir()
	blocked := filepath.Join(d, "blocked")
	killRoleMidRun(t, "READY", 100*time.Millisecond, guardRoleEnv+"="+d)
	if !exists(blocked) {
		t.Fatalf("control: after the SIGKILL no placeholder is left, so the test proves nothing")
	}
	deny := moat.Config{WorkDir: d, Deny: []string{blocked}}
	live, err := moat.New(deny) // sweeps the stale one, guards afresh
	if err != nil {
		t.Fatal(err)
	}
	second, err := moat.New(deny) // sees the live one: not stale
	if err != nil {
		t.Fatal(err)
	}
	second.Close()
	if !exists(blocked) {
		t.Errorf("the placeholder of a sandbox still running was removed")
	}
	r := sh(t, live, "cd "+shq(d)+" && mkdir -p blocked; echo x > blocked/f && echo ATTACK-OK")
	mustNotContain(t, r, "ATTACK-OK")
	live.Close()
	absent(t, blocked)
	// A directory of the user's at a denied path is masked, never removed.
	writeFile(t, filepath.Join(blocked, ".moat-placeholder"), "the user's own\n")
	sb := newSandbox(t, deny)
	sb.Close()
	fileIs(t, filepath.Join(blocked, ".moat-placeholder"), "the user's own\n")
}
