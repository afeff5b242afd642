//go:build linux

package escape_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Attacks on policy documents, their cwd fragments, patterns and the
// filesystem engine, each with a positive control.

// cwdWithOutside makes a parent holding a cwd and an outside directory that no
// pattern of the policy names.
func cwdWithOutside(t *testing.T) (cwd, outside string) {
	t.Helper()
	base := docCwd(t)
	cwd, outside = filepath.Join(base, "proj"), filepath.Join(base, "outside")
	for _, d := range []string{cwd, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return cwd, outside
}

// TestFragmentEscapedDotDotStaysInCwd: the cwd's content is untrusted, so a
// .moat-write fragment may not make a path outside the cwd writable. A
// ".." written with escapes (`\.\.`, `.\.`, `\..`) passes the pattern
// compiler's ".." check, which looks at the component before unescaping,
// and the literal ".." then climbs out of the cwd. The control names the
// outside directory in the policy itself, which may do so.
func TestFragmentEscapedDotDotStaysInCwd(t *testing.T) {
	write := `echo W > ../outside/w && echo WROTE`
	for _, line := range []string{`\.\./outside`, `.\./outside`, `\../outside`, `d/\.\./\.\./outside`} {
		attack(t, line, func(t *testing.T, lifted bool) wroteFile {
			cwd, outside := cwdWithOutside(t)
			doc := map[string]any{"command": []string{"sh", "-c", write}}
			if lifted {
				doc["filesystem"] = map[string]any{"writable": []string{outside}}
			} else if err := os.WriteFile(filepath.Join(cwd, ".moat-write"), []byte(line+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return probeWrote(runDocument(t, doc, cwd), filepath.Join(outside, "w"), "WROTE")
		}, wroteFile.blocked)
	}
}

// wroteFile is a probe's result and whether it wrote its file.
type wroteFile struct {
	result
	wrote bool // the file exists, or the probe printed its mark
}

// probeWrote reads r's outcome: whether path exists or r printed mark.
func probeWrote(r result, path, mark string) wroteFile {
	_, err := os.Lstat(path)
	return wroteFile{r, err == nil || strings.Contains(r.Stdout, mark)}
}

// blocked says the probe wrote nothing.
func (w wroteFile) blocked() bool { return !w.wrote }

// TestDeniedFileUnreadableThroughHardLink: a denied file that has another name in the
// readable cwd is read through that name, silently (the gap is only in the
// report). The carve gives the other name, an entry beside the denied one,
// a rule of its own, and Landlock rules hold on inodes. The control reads
// the denied file with no deny pattern.
func TestDeniedFileUnreadableThroughHardLink(t *testing.T) {
	for _, tt := range []struct {
		name, deny, target string
	}{
		{"denied file", ".env", ".env"},
		{"file in denied directory", "cfg", "cfg/key"},
	} {
		attack(t, tt.name, func(t *testing.T, lifted bool) result {
			cwd := docCwd(t)
			if err := os.MkdirAll(filepath.Join(cwd, "cfg"), 0o755); err != nil {
				t.Fatal(err)
			}
			secret := filepath.Join(cwd, tt.target)
			if err := os.WriteFile(secret, []byte("SECRET-HL\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Link(secret, filepath.Join(cwd, "alias")); err != nil {
				t.Fatal(err)
			}
			doc := map[string]any{"command": []string{"sh", "-c", "cat alias " + tt.target}}
			if !lifted {
				doc["filesystem"] = map[string]any{"deny": []string{tt.deny}}
			}
			return runDocument(t, doc, cwd)
		}, func(r result) bool { return !strings.Contains(r.Stdout, "SECRET-HL") })
	}
}

// TestControlNamesCreatedDuringRunRemoved: with `writable: ["."]` the
// sandbox must not leave .git, .agents, .pi, .moat-* or .heimdall-* in
// the cwd (Heimdall L11): after a normal exit none of them, nor any
// quarantined copy, is in the cwd (they are in the state directory's
// quarantine), and after a SIGKILL of moat mid-run the next run's New
// sweeps what the killed run planted before its command runs, so a
// planted `**` .moat-write does not widen it. The control writes a
// regular file, which must stay.
//
// Not asserted, a documented gap (GUARANTEES.md): during the run the names
// exist on the host. Blocking their creation without freezing the cwd's
// top would need name-based create blocking, which neither Landlock nor a
// mount can express, so a host git or moat in that directory while the
// sandbox runs reads what it planted.
func TestControlNamesCreatedDuringRunRemoved(t *testing.T) {
	names := []string{".moat-write", ".moat-deny", ".heimdall-write", ".agents", ".pi", ".git"}
	script := "echo ok > regular.txt; for f in " + strings.Join(names, " ") + "; do echo '**' > $f; done; sleep 1"
	cwd := docCwd(t)
	r := runDocument(t, map[string]any{"command": []string{"sh", "-c", script},
		"filesystem": map[string]any{"writable": []string{"."}}}, cwd)
	if left := leftControlEntries(t, cwd); len(left) > 0 { // controljournal_linux_test.go
		t.Errorf("left behind in the cwd after exit: %v", left)
	}
	if b, err := os.ReadFile(filepath.Join(cwd, "regular.txt")); err != nil || string(b) != "ok\n" {
		t.Errorf("control: regular.txt not written (%v):\n%v", err, r)
	}
	t.Run("after SIGKILL", func(t *testing.T) {
		isolateState(t) // controljournal_linux_test.go
		cwd := docCwd(t)
		killCrashRole(t, cwd, "") // plants .moat-write with ** and .git/config
		if !exists(filepath.Join(cwd, ".moat-write")) {
			t.Fatalf("control: nothing planted is left after the kill: %s", snapshot(cwd))
		}
		r := runDocument(t, map[string]any{"command": []string{"sh", "-c", "echo x > w && echo WROTE"}}, cwd)
		if strings.Contains(r.Stdout, "WROTE") || exists(filepath.Join(cwd, "w")) {
			t.Errorf("the killed run's .moat-write widened the next empty policy:\n%v", r)
		}
		if left := leftControlEntries(t, cwd); len(left) > 0 {
			t.Errorf("left behind in the cwd after the next run: %v", left)
		}
	})
}

// TestFragmentCannotNegateOutsideDeny: the cwd's fragments are trusted
// like the document for the cwd itself (Heimdall's L15: a fragment's
// `!secret.txt` undoes the document's deny of a cwd path), but a fragment
// may name no path outside the cwd: `!/outside/secret` would undo the
// user's deny of a host file, and is refused before anything runs (exit
// 2). The controls: the same document without the fragment denies the
// outside file, and the cwd negation of L15 still reads the cwd file.
func TestFragmentCannotNegateOutsideDeny(t *testing.T) {
	for _, tt := range []struct {
		name, fragName string
		outside        bool // the deny and the negation name the outside file
		fragment       bool
		wantCode       int
		wantRead       bool
	}{
		{"fragment negates an outside deny", ".moat-deny", true, true, 2, false},
		{"heimdall fragment negates an outside deny", ".heimdall-deny", true, true, 2, false},
		{"control: no fragment, the outside file is denied", ".moat-deny", true, false, -1, false},
		{"control: a cwd negation reads the cwd file (L15)", ".moat-deny", false, true, 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cwd, outside := cwdWithOutside(t)
			secret := filepath.Join(cwd, ".env")
			if tt.outside {
				secret = filepath.Join(outside, ".env")
			}
			if err := os.WriteFile(secret, []byte("SECRET-NEG\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			deny := ".env"
			if tt.outside {
				deny = secret
			}
			if tt.fragment {
				if err := os.WriteFile(filepath.Join(cwd, tt.fragName), []byte("!"+deny+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			r := runDocument(t, map[string]any{"command": []string{"cat", secret},
				"filesystem": map[string]any{"deny": []string{deny}}}, cwd)
			if got := strings.Contains(r.Stdout, "SECRET-NEG"); got != tt.wantRead {
				t.Errorf("read the denied file: %v, want %v:\n%v", got, tt.wantRead, r)
			}
			switch {
			case tt.wantCode == 2 && (r.Code != 2 || !strings.Contains(r.Stderr, "invalid filesystem fragment "+filepath.Join(cwd, tt.fragName)+": line 1: ")):
				t.Errorf("want the fragment refused (exit 2, naming it and its line):\n%v", r)
			case tt.wantCode == -1 && (r.Code == 0 || r.Code == 2):
				t.Errorf("want cat to fail on the denied file, not exit %d:\n%v", r.Code, r)
			case tt.wantCode == 0 && r.Code != 0:
				t.Errorf("want exit 0:\n%v", r)
			}
		})
	}
}

// TestDenyThroughDirLinkHolds: a deny pattern whose way passes through a
// symbolic link to a directory of the cwd (`conf/secret` with conf ->
// real) denies nothing, silently: the walk does not enter links, and a
// link on the way is neither resolved nor an error. The secret is read
// through both names; a deny of the real path must hold too. The control
// (attack's lifted run) reads the secret with no deny.
func TestDenyThroughDirLinkHolds(t *testing.T) {
	for _, tt := range []struct {
		name, deny string
	}{
		{"literal through link", "conf/secret"},
		{"glob through link", "conf/*"},
		{"real path", "real/secret"},
	} {
		attack(t, tt.name, func(t *testing.T, lifted bool) result {
			cwd := docCwd(t)
			if err := os.Mkdir(filepath.Join(cwd, "real"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(cwd, "real", "secret"), []byte("LINK-SECRET\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("real", filepath.Join(cwd, "conf")); err != nil {
				t.Fatal(err)
			}
			doc := map[string]any{"command": []string{"sh", "-c", "cat conf/secret; cat real/secret"}}
			if !lifted {
				doc["filesystem"] = map[string]any{"deny": []string{tt.deny}}
			}
			return runDocument(t, doc, cwd)
		}, func(r result) bool {
			// Refused as an error (exit 2) is not a weaker plan.
			return r.Code == 2 || !strings.Contains(r.Stdout, "LINK-SECRET")
		})
	}
}

// TestDeniedLinkNotReplaceable: a denied symbolic link in a writable cwd
// (`deny: ["key"]`, key -> real.key) has its target denied, but the link
// itself is neither masked nor carved: the sandbox removes it and puts its
// own link there, so the host's `key` now leads where the sandbox chose.
// A denied regular file must hold the same way. The control (attack's
// lifted run) replaces the link or file with no deny.
func TestDeniedLinkNotReplaceable(t *testing.T) {
	for _, tt := range []struct {
		name string
		link bool
	}{
		{"denied link", true},
		{"denied file", false},
	} {
		attack(t, tt.name, func(t *testing.T, lifted bool) wroteFile {
			cwd := docCwd(t)
			if err := os.WriteFile(filepath.Join(cwd, "real.key"), []byte("K\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			key := filepath.Join(cwd, "key")
			var err error
			if tt.link {
				err = os.Symlink("real.key", key)
			} else {
				err = os.WriteFile(key, []byte("K\n"), 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
			fsys := map[string]any{"writable": []string{"."}}
			if !lifted {
				fsys["deny"] = []string{"key"}
			}
			r := runDocument(t, map[string]any{"command": []string{"sh", "-c", "rm -f key && ln -s /attacker key && echo REPLACED"},
				"filesystem": fsys}, cwd)
			dest, _ := os.Readlink(key)
			return wroteFile{r, dest == "/attacker" || strings.Contains(r.Stdout, "REPLACED")}
		}, wroteFile.blocked)
	}
}
