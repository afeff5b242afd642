//go:build linux

package escape_test

// Filesystem probes: what sandboxed code can read, write and execute.

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/moattest"
)

// writeFile writes content to path, creating directories, or fails.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := moattest.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// G1: the working directory is readable and writable.
func TestFSWorkDirReadWrite(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, moat.Config{})
	r := sh(t, sb, "echo written > probe.txt && cat probe.txt && mkdir -p a/b && echo deep > a/b/c && cat a/b/c && rm a/b/c")
	if r.Err != nil {
		t.Fatalf("writing the working directory failed: %s", r)
	}
	mustContain(t, r, "written")
	mustContain(t, r, "deep")
	b, err := os.ReadFile(filepath.Join(sb.WorkDir(), "probe.txt"))
	if err != nil || strings.TrimSpace(string(b)) != "written" {
		t.Fatalf("host sees %q, %v in the working directory", b, err)
	}
}

// G2, I1: a READ grant opens files created before the sandbox, nested ones
// included, and a grant on a single file opens that file only.
func TestFSReadGrant(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "top.txt"), "TOP-CONTENT")
	writeFile(t, filepath.Join(dir, "sub", "deeper", "nested.txt"), "NESTED-CONTENT")
	fileDir := t.TempDir()
	granted := filepath.Join(fileDir, "granted.txt")
	sibling := filepath.Join(fileDir, "sibling.txt")
	writeFile(t, granted, "GRANTED-FILE")
	writeFile(t, sibling, "SIBLING-FILE")

	// The same outside the temporary directory, which the sandbox masks.
	homeDir, err := os.MkdirTemp(home(t), ".moat-grant-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(homeDir) })
	writeFile(t, filepath.Join(homeDir, "sub", "home-nested.txt"), "HOME-NESTED")

	sb := newSandbox(t, moat.Config{Grants: []moat.Grant{
		{Path: dir, Access: moat.READ},
		{Path: granted, Access: moat.READ},
		{Path: homeDir, Access: moat.READ},
	}})
	tests := []struct {
		name, script, want string
	}{
		{"home nested", "cat " + filepath.Join(homeDir, "sub", "home-nested.txt"), "HOME-NESTED"},
		{"top", "cat " + filepath.Join(dir, "top.txt"), "TOP-CONTENT"},
		{"nested", "cat " + filepath.Join(dir, "sub", "deeper", "nested.txt"), "NESTED-CONTENT"},
		{"list", "ls -R " + dir, "nested.txt"},
		{"file grant", "cat " + granted, "GRANTED-FILE"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := sh(t, sb, tc.script)
			if r.Err != nil {
				t.Fatalf("reading a granted path failed: %s", r)
			}
			mustContain(t, r, tc.want)
		})
	}
	t.Run("sibling of a file grant", func(t *testing.T) {
		t.Parallel()
		r := sh(t, sb, "cat "+sibling)
		if r.Err == nil {
			t.Errorf("a file grant opened its sibling: %s", r)
		}
		mustNotContain(t, r, "SIBLING-FILE")
		mustContain(t, hostSh(t, "cat "+sibling), "SIBLING-FILE") // control
	})
	t.Run("read grant is not writable", func(t *testing.T) {
		t.Parallel()
		target := filepath.Join(dir, "sub", "new.txt")
		r := sh(t, sb, "echo x > "+target+"; echo tamper >> "+filepath.Join(dir, "top.txt"))
		if exists(target) {
			t.Errorf("a READ grant allowed creating %s: %s", target, r)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "top.txt")); string(b) != "TOP-CONTENT" {
			t.Errorf("a READ grant allowed appending: file is %q", b)
		}
	})
}

// An EXEC grant runs programs the host put there (and only there).
func TestFSExecGrant(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tool := filepath.Join(dir, "tool.sh")
	writeFile(t, tool, "#!/bin/sh\necho TOOL-RAN\n")
	if err := os.Chmod(tool, 0o755); err != nil {
		t.Fatal(err)
	}
	r := sh(t, newSandbox(t, moat.Config{Grants: []moat.Grant{{Path: dir, Access: moat.EXEC}}}), tool)
	if r.Err != nil || !stdoutLine(r, "TOOL-RAN") {
		t.Errorf("an EXEC grant did not run %s: %s", tool, r)
	}
	if w := sh(t, newSandbox(t, moat.Config{Grants: []moat.Grant{{Path: dir, Access: moat.EXEC}}}), "echo x > "+filepath.Join(dir, "new")); exists(filepath.Join(dir, "new")) {
		t.Errorf("an EXEC grant allowed writing: %s", w)
	}
	if d := sh(t, newSandbox(t, moat.Config{Grants: []moat.Grant{{Path: dir, Access: moat.READ}}}), tool); stdoutLine(d, "TOOL-RAN") {
		t.Errorf("a READ grant allowed executing: %s", d)
	}
}

// G3: a secret outside the sandbox is not readable; the same read works on
// the host and in a sandbox granted READ on it.
func TestFSSecretOutsideUnreadable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret.txt")
	writeFile(t, secret, "TOP-SECRET-G3")
	probe := "cat " + secret + "; ls " + dir

	r := sh(t, newSandbox(t, moat.Config{}), probe)
	mustNotContain(t, r, "TOP-SECRET-G3")
	mustNotContain(t, r, "secret.txt\n")
	if r.Err == nil {
		t.Errorf("reading the secret did not fail: %s", r)
	}

	mustContain(t, hostSh(t, probe), "TOP-SECRET-G3")
	granted := sh(t, newSandbox(t, moat.Config{Grants: []moat.Grant{{Path: dir, Access: moat.READ}}}), probe)
	mustContain(t, granted, "TOP-SECRET-G3")
}

// G4: nothing outside the working directory can be created, changed or
// removed; the same scripts work with a WRITE grant.
func TestFSWriteOutsideDenied(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		script string // $D is the target directory
		// check reports whether the script took effect in dir.
		check func(dir string) bool
	}{
		{"create", `echo written > "$D/new.txt"`, func(d string) bool { return exists(filepath.Join(d, "new.txt")) }},
		{"append", `echo tamper >> "$D/existing.txt"`, func(d string) bool { return contentOf(d, "existing.txt") != "ORIGINAL" }},
		{"truncate", `: > "$D/existing.txt"`, func(d string) bool { return contentOf(d, "existing.txt") != "ORIGINAL" }},
		{"delete", `rm "$D/existing.txt"`, func(d string) bool { return !exists(filepath.Join(d, "existing.txt")) }},
		{"rename", `mv "$D/existing.txt" "$D/moved.txt"`, func(d string) bool { return !exists(filepath.Join(d, "existing.txt")) }},
		{"mkdir", `mkdir "$D/newdir"`, func(d string) bool { return exists(filepath.Join(d, "newdir")) }},
		{"symlink", `ln -s /etc/passwd "$D/link"`, func(d string) bool { return exists(filepath.Join(d, "link")) }},
		{"chmod", `chmod 0777 "$D/existing.txt"`, func(d string) bool {
			fi, err := os.Stat(filepath.Join(d, "existing.txt"))
			return err == nil && fi.Mode().Perm() == 0o777
		}},
	}
	setup := func(t *testing.T) string {
		d := t.TempDir()
		writeFile(t, filepath.Join(d, "existing.txt"), "ORIGINAL")
		return d
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := setup(t)
			r := shEnv(t, newSandbox(t, moat.Config{}), []string{"D=" + dir}, tc.script)
			if tc.check(dir) {
				t.Fatalf("the sandbox changed %s outside its working directory: %s", dir, r)
			}
			if r.Err == nil {
				t.Errorf("the denied write reported success: %s", r)
			}
			// Control: the same script takes effect with a WRITE grant.
			ctl := setup(t)
			cr := shEnv(t, newSandbox(t, moat.Config{Grants: []moat.Grant{{Path: ctl, Access: moat.WRITE}}}), []string{"D=" + ctl}, tc.script)
			if !tc.check(ctl) {
				t.Fatalf("control: the script had no effect with a WRITE grant, so the probe cannot detect a write: %s", cr)
			}
		})
	}
}

func contentOf(dir, name string) string {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// execProbes write something executable into $D and try to run it. Each
// prints CREATED once the file is written and EXECUTED only if the written
// code ran.
var execProbes = []struct {
	name, script string
}{
	{"script", `cd "$D" && printf '#!/bin/sh\necho EXECUTED\n' > payload.sh && chmod +x payload.sh && echo CREATED && ./payload.sh`},
	{"elf", `cd "$D" && cp /bin/echo ./t && chmod +x ./t && echo CREATED && ./t EXECUTED`},
	{"dynamic loader", `cd "$D" && cp /bin/echo ./t && echo CREATED && ld=$(ls /lib64/ld-linux*.so* /lib/ld-linux*.so* 2>/dev/null | head -n1) && echo "loader $ld" >&2 && "$ld" ./t EXECUTED`},
	{"ctypes dlopen", `cd "$D" && printf 'int moat_probe(void) { return 42; }\n' > p.c && gcc -shared -fPIC -o p.so p.c && echo CREATED && python3 -c 'import ctypes; print("EXECUTED" if ctypes.CDLL("./p.so").moat_probe() == 42 else "wrong")'`},
}

func stdoutLine(r result, line string) bool {
	for _, l := range strings.Split(r.Stdout, "\n") {
		if strings.TrimSpace(l) == line {
			return true
		}
	}
	return false
}

// G5: nothing the sandbox writes can be run, in the working directory or in
// its private /dev/shm; with a WRITE|EXEC grant the same probes run, and the
// sandbox's /tmp cannot even be written.
func TestFSWrittenFilesNotExecutable(t *testing.T) {
	t.Parallel()
	need(t, "gcc", "python3")
	// WRITE alone never allows executing what is written.
	wonly := t.TempDir()
	sb := newSandbox(t, moat.Config{Grants: []moat.Grant{{Path: wonly, Access: moat.WRITE}}})
	rwx := t.TempDir()
	ctl := newSandbox(t, moat.Config{Grants: []moat.Grant{{Path: rwx, Access: moat.WRITE | moat.EXEC}}})
	locations := []struct {
		name string
		dir  func(probe string) string
	}{
		{"workdir", func(p string) string { return filepath.Join(sb.WorkDir(), "x-"+strings.ReplaceAll(p, " ", "-")) }},
		{"write-grant", func(p string) string { return filepath.Join(wonly, strings.ReplaceAll(p, " ", "-")) }},
		{"dev-shm", func(p string) string {
			return "/dev/shm/moat-x-" + strings.ReplaceAll(p, " ", "-") + "-" + randomHex(4)
		}},
	}
	for _, p := range execProbes {
		for _, loc := range locations {
			t.Run(loc.name+"/"+p.name, func(t *testing.T) {
				t.Parallel()
				d := loc.dir(p.name)
				if strings.HasPrefix(d, "/dev/shm/") {
					// Should the sandbox's /dev/shm be the host's, clean up.
					t.Cleanup(func() { os.RemoveAll(d) })
				}
				r := shEnv(t, sb, []string{"D=" + d}, `mkdir -p "$D" && `+p.script)
				if !stdoutLine(r, "CREATED") {
					t.Fatalf("the probe could not write its payload into %s, so it proves nothing: %s", d, r)
				}
				if stdoutLine(r, "EXECUTED") {
					t.Fatalf("code written into %s was executed: %s", loc.name, r)
				}
			})
		}
		t.Run("control-write-exec-grant/"+p.name, func(t *testing.T) {
			t.Parallel()
			d := filepath.Join(rwx, strings.ReplaceAll(p.name, " ", "-"))
			r := shEnv(t, ctl, []string{"D=" + d}, `mkdir -p "$D" && `+p.script)
			if !stdoutLine(r, "CREATED") || !stdoutLine(r, "EXECUTED") {
				t.Fatalf("control: with a WRITE|EXEC grant the probe should run its payload: %s", r)
			}
		})
	}
	t.Run("tmp not executable", func(t *testing.T) {
		t.Parallel()
		// /tmp is the sandbox's private temp: writable, never executable.
		name := "moat-x-" + randomHex(6)
		r := sh(t, sb, `cp /bin/echo /tmp/`+name+` && echo CREATED && /tmp/`+name+` EXECUTED`)
		if !stdoutLine(r, "CREATED") {
			t.Fatalf("the sandbox could not write its private /tmp, so the probe proves nothing: %s", r)
		}
		if stdoutLine(r, "EXECUTED") {
			t.Fatalf("the sandbox ran a file it wrote in its /tmp: %s", r)
		}
		if exists("/tmp/" + name) {
			os.Remove("/tmp/" + name)
			t.Fatalf("the sandbox's write reached the host's /tmp")
		}
	})
}

// memfdProbe writes /bin/echo into memfds created with each flag set and
// tries to execute them by /proc/self/fd path and by fexecve; it prints
// EXECUTED-<flags>-<how> for each that ran.
const memfdProbe = `
import os
data = open("/bin/echo", "rb").read()
# 0: plain; 1: MFD_CLOEXEC; 0x10: MFD_EXEC; 2: MFD_ALLOW_SEALING
for name, flags in (("plain", 0), ("cloexec", 1), ("exec", 0x10), ("sealing", 2), ("noexec-seal", 8)):
    try:
        fd = os.memfd_create("moat-" + name, flags)
    except OSError as e:
        print(name, "memfd_create errno", e.errno, flush=True)
        continue
    os.write(fd, data)
    print("CREATED-" + name, flush=True)
    for how in ("proc", "fexecve"):
        pid = os.fork()
        if pid == 0:
            try:
                argv = ["echo", "EXECUTED-" + name + "-" + how]
                if how == "proc":
                    os.execv("/proc/self/fd/%d" % fd, argv)
                else:
                    os.execve(fd, argv, {})
            except OSError as e:
                print(name, how, "errno", e.errno, flush=True)
            os._exit(1)
        os.waitpid(pid, 0)
`

// memfdDlopenProbe builds a shared library in the working directory, copies
// it into a memfd sealed against execution (MFD_NOEXEC_SEAL, the only kind
// the sandbox may create) and loads it with dlopen, which maps it
// executable without execve.
const memfdDlopenProbe = `printf 'int moat_probe(void) { return 42; }\n' > p.c && gcc -shared -fPIC -o p.so p.c && echo CREATED && python3 -c '
import ctypes, os
fd = os.memfd_create("moat-dl", 8)
os.write(fd, open("p.so", "rb").read())
print("EXECUTED" if ctypes.CDLL("/proc/self/fd/%d" % fd).moat_probe() == 42 else "wrong")
'`

// G5: an in-memory file is no way around it: a memfd filled with a binary
// or a library cannot be executed. Control: the same programs run it on
// the host.
func TestFSMemfdExec(t *testing.T) {
	t.Parallel()
	need(t, "python3", "gcc")
	sb := newSandbox(t, moat.Config{})
	t.Run("execve", func(t *testing.T) {
		t.Parallel()
		r := python(t, sb, memfdProbe)
		if strings.Contains(r.Stdout, "EXECUTED-") {
			t.Errorf("a memfd written by the sandbox was executed: %s", r)
		}
		h := hostPython(t, memfdProbe)
		if !strings.Contains(h.Stdout, "EXECUTED-plain-proc") || !strings.Contains(h.Stdout, "EXECUTED-plain-fexecve") {
			t.Fatalf("control: the memfd was not executed on the host: %s", h)
		}
	})
	t.Run("dlopen", func(t *testing.T) {
		t.Parallel()
		r := sh(t, sb, memfdDlopenProbe)
		if !stdoutLine(r, "CREATED") {
			t.Fatalf("the probe could not build its library: %s", r)
		}
		if stdoutLine(r, "EXECUTED") {
			t.Errorf("a library the sandbox wrote into a memfd was loaded and run: %s", r)
		}
		dir := t.TempDir()
		h := hostSh(t, "cd "+dir+" && "+memfdDlopenProbe)
		if !stdoutLine(h, "EXECUTED") {
			t.Fatalf("control: the memfd library did not load on the host: %s", h)
		}
	})
}

// G8, I6: TMPDIR, TMP and TEMP are the sandbox's private /tmp, never the
// working directory (Go ignores a go.mod at the temp root), and temporary
// files can be made there.
func TestFSTempDirIsPrivate(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, moat.Config{})
	r := sh(t, sb, `printf '%s\n%s\n%s\n' "$TMPDIR" "$TMP" "$TEMP"`)
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if len(lines) != 3 {
		t.Fatalf("want three lines: %s", r)
	}
	for i, name := range []string{"TMPDIR", "TMP", "TEMP"} {
		if lines[i] != "/tmp" {
			t.Errorf("%s = %q, want the private /tmp", name, lines[i])
		}
	}
	w := sh(t, sb, `f=$(mktemp) && echo tmpok > "$f" && cat "$f" && echo "$f" && python3 -c 'import tempfile; f = tempfile.NamedTemporaryFile(delete=False); f.write(b"pytmp"); f.close(); print(f.name)'`)
	if w.Err != nil {
		t.Fatalf("temporary files do not work: %s", w)
	}
	mustContain(t, w, "tmpok")
	for _, l := range strings.Split(strings.TrimSpace(w.Stdout), "\n")[1:] {
		if filepath.Dir(l) != "/tmp" {
			t.Errorf("temporary file %q is not in the private /tmp", l)
		}
	}
}

// G9: an automatic working directory is removed by Close, whatever the
// sandbox left in it, and a supplied one is kept.
func TestFSWorkDirRemovedOnClose(t *testing.T) {
	t.Parallel()
	autoCases := []struct{ name, script string }{
		{"auto", "mkdir -p a/b && echo x > a/b/f && chmod 0400 a/b/f && touch top"},
		// A read-only directory, as go mod download leaves in its cache.
		{"auto with read-only directory", "mkdir -p a/b && echo x > a/b/f && chmod 0500 a/b && touch top"},
	}
	for _, tc := range autoCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sb, err := moat.New(moat.Config{})
			if err != nil {
				t.Fatal(err)
			}
			wd := sb.WorkDir()
			r := sh(t, sb, tc.script)
			if r.Err != nil || !exists(filepath.Join(wd, "a", "b", "f")) {
				sb.Close()
				t.Fatalf("control: writing the working directory failed: %s", r)
			}
			closeErr := sb.Close()
			if _, err := os.Lstat(wd); !errors.Is(err, os.ErrNotExist) {
				os.Chmod(filepath.Join(wd, "a", "b"), 0o700)
				os.RemoveAll(wd)
				t.Fatalf("the automatic working directory %s survived Close (Close: %v; lstat: %v)", wd, closeErr, err)
			}
			if closeErr != nil {
				t.Fatalf("Close: %v", closeErr)
			}
		})
	}
	t.Run("supplied", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		sb, err := moat.New(moat.Config{WorkDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		r := sh(t, sb, "echo kept > kept.txt")
		if err := sb.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if contentOf(dir, "kept.txt") != "kept\n" {
			t.Fatalf("the supplied working directory lost its file: %q (%s)", contentOf(dir, "kept.txt"), r)
		}
	})
}

// I14: a grant of a missing path is an error from New that names the path.
func TestFSMissingGrantIsError(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "does-not-exist-"+randomHex(4))
	for _, a := range []moat.Access{moat.READ, moat.WRITE, moat.EXEC} {
		sb, err := moat.New(moat.Config{Grants: []moat.Grant{{Path: missing, Access: a}}})
		if err == nil {
			sb.Close()
			t.Fatalf("moat.New accepted a %v grant of missing %s", a, missing)
		}
		if !strings.Contains(err.Error(), missing) {
			t.Errorf("the error does not name the path %s: %v", missing, err)
		}
	}
}

// I5: the host's shared temporary directories are neither readable nor
// writable: the sandbox has private ones.
func TestFSSharedTempDirsPrivate(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, moat.Config{})
	for _, dir := range []string{"/tmp", "/var/tmp", "/dev/shm"} {
		t.Run("read host object in "+dir, func(t *testing.T) {
			t.Parallel()
			decoy := filepath.Join(dir, "moat-decoy-"+randomHex(6))
			plant(t, decoy, "HOST-DECOY-"+dir)
			r := sh(t, sb, "cat "+decoy+"; ls -a "+dir)
			mustNotContain(t, r, "HOST-DECOY-")
			if strings.Contains(r.Stdout, filepath.Base(decoy)) {
				t.Errorf("the sandbox lists the host's %s: %s", decoy, r)
			}
			mustContain(t, hostSh(t, "cat "+decoy), "HOST-DECOY-") // control
		})
		t.Run("write reaches host "+dir, func(t *testing.T) {
			t.Parallel()
			target := filepath.Join(dir, "moat-sbx-"+randomHex(6))
			t.Cleanup(func() { os.Remove(target) })
			r := sh(t, sb, "echo SANDBOX-WROTE > "+target+" && cat "+target)
			if exists(target) {
				t.Fatalf("a file the sandbox wrote to %s appeared on the host: %s", dir, r)
			}
			// The sandbox's /tmp, /var/tmp and /dev/shm are its own,
			// writable: the write lands there and nowhere on the host.
			mustContain(t, r, "SANDBOX-WROTE")
			// Control: the host can create the same file.
			if hr := hostSh(t, "echo HOST > "+target); hr.Err != nil || !exists(target) {
				t.Fatalf("control: the host cannot write %s: %s", target, hr)
			}
		})
	}
}

// E1, E2: /etc/shadow stays closed, /etc/passwd is readable.
func TestFSEtc(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, moat.Config{})
	t.Run("shadow", func(t *testing.T) {
		t.Parallel()
		// Unprivileged, the read fails; as root, moat masks the file, so
		// it may read as empty. Either way no entry may come out.
		r := sh(t, sb, "cat /etc/shadow")
		if strings.Contains(r.Stdout, ":") || (r.Err == nil && r.Stdout != "") {
			t.Fatalf("/etc/shadow was read: %s", r)
		}
		if os.Geteuid() != 0 && r.Err == nil {
			t.Fatalf("cat /etc/shadow succeeded: %s", r)
		}
		// Control: root reads it on the host. An unprivileged user cannot,
		// so there the control is that the same cat reads an /etc file the
		// user may read (the passwd case below).
		if os.Geteuid() == 0 {
			mustContain(t, hostSh(t, "cat /etc/shadow"), "root:")
		}
	})
	t.Run("passwd", func(t *testing.T) {
		t.Parallel()
		r := sh(t, sb, "head /etc/passwd")
		if r.Err != nil {
			t.Fatalf("/etc/passwd is not readable: %s", r)
		}
		mustContain(t, r, "root:")
	})
}

// E9: credentials and other projects in the invoking user's real home are
// out of reach, even through links planted in the working directory.
func TestFSHomeCredentials(t *testing.T) {
	t.Parallel()
	h := home(t)
	decoys := []struct{ rel, content string }{
		{".ssh/id_ed25519", "DECOY-SSH-KEY"},
		{".aws/credentials", "DECOY-AWS"},
		{".config/gh/hosts.yml", "DECOY-GH-TOKEN"},
		{".docker/config.json", "DECOY-DOCKER-AUTH"},
		{".netrc", "DECOY-NETRC"},
		{"otherproject/.env", "DECOY-OTHER-PROJECT-ENV"},
	}
	// A real credential of the user running the battery is never
	// overwritten: it is probed as it is, without printing what it holds.
	planted := map[string]bool{}
	for _, d := range decoys {
		if _, err := os.Lstat(filepath.Join(h, d.rel)); err == nil {
			t.Logf("%s exists: probing the real file without reading it out", d.rel)
			continue
		}
		plantHome(t, d.rel, d.content)
		planted[d.rel] = true
	}
	// The link probes need a key whose content is known.
	key := filepath.Join(h, ".ssh", "id_ed25519")
	keyContent := "DECOY-SSH-KEY"
	if !planted[".ssh/id_ed25519"] {
		keyContent = "DECOY-SSH-KEY-" + randomHex(4)
		key = plantHome(t, ".ssh/moat-decoy-"+randomHex(4), keyContent)
	}
	sb := newSandbox(t, moat.Config{})
	t.Run("group", func(t *testing.T) {
		for _, d := range decoys {
			t.Run(d.rel, func(t *testing.T) {
				t.Parallel()
				p := filepath.Join(h, d.rel)
				probe := "cat " + p + " && echo READ-OK"
				if !planted[d.rel] {
					probe = "cat " + p + " >/dev/null && echo READ-OK"
				}
				r := sh(t, sb, probe)
				if strings.Contains(r.Stdout, "READ-OK") || strings.Contains(r.Stdout, d.content) {
					t.Errorf("the sandbox read %s: %s", p, r)
				}
				mustContain(t, hostSh(t, probe), "READ-OK") // control
			})
		}
		t.Run("ls ~/.ssh", func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(h, ".ssh")
			r := sh(t, sb, "ls -a "+dir)
			mustNotContain(t, r, filepath.Base(key))
			if r.Err == nil {
				t.Errorf("listing %s succeeded: %s", dir, r)
			}
			mustContain(t, hostSh(t, "ls -a "+dir), filepath.Base(key))
		})
		t.Run("ls home", func(t *testing.T) {
			t.Parallel()
			r := sh(t, sb, "ls -a "+h)
			mustNotContain(t, r, "otherproject")
			mustContain(t, hostSh(t, "ls -a "+h), "otherproject")
		})
		t.Run("symlink", func(t *testing.T) {
			t.Parallel()
			r := sh(t, sb, "ln -s "+key+" ./key-link && echo LINKED && cat ./key-link")
			mustContain(t, r, "LINKED")
			mustNotContain(t, r, keyContent)
			// Control: the link the sandbox planted opens the key from the host.
			mustContain(t, hostSh(t, "cat "+filepath.Join(sb.WorkDir(), "key-link")), keyContent)
		})
		t.Run("hardlink", func(t *testing.T) {
			t.Parallel()
			r := sh(t, sb, "ln "+key+" ./key-hard; cat ./key-hard")
			mustNotContain(t, r, keyContent)
			if c := contentOf(sb.WorkDir(), "key-hard"); c == keyContent {
				t.Errorf("the sandbox hard-linked the key into its working directory")
			}
			// Control: the host can make the same link into a directory on
			// the same file system as the home.
			dir, err := os.MkdirTemp(h, ".moat-hardlink-")
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(dir)
			mustContain(t, hostSh(t, "ln "+key+" "+dir+"/key-hard && cat "+dir+"/key-hard"), keyContent)
		})
	})
}
