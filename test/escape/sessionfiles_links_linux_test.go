//go:build linux

package escape_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/session"
)

// The file API of a session reaches only its places (the working directory
// and the grants it is given), whatever links, ".." or renames the sandbox
// puts in the way. Each attack aims at a directory the sandbox itself can
// reach (a grant that is no place of the file API), so that only the API's
// resolution beneath the place stands in the way; the control shows a
// plain sandboxed process getting through by the same path.

// outsideDirs makes, beside the working directory, a read-only directory
// holding a secret and a writable one, both granted to the sandbox but no
// place of the file API.
func outsideDirs(t *testing.T) (cfg moat.Config, secretDir, outDir string) {
	base := t.TempDir()
	secretDir, outDir = filepath.Join(base, "secretdir"), filepath.Join(base, "outdir")
	writeFile(t, filepath.Join(secretDir, "secret"), "HOST-SECRET-7731\n")
	writeFile(t, filepath.Join(outDir, ".keep"), "")
	work := filepath.Join(base, "work")
	writeFile(t, filepath.Join(work, ".keep"), "")
	cfg = moat.Config{WorkDir: work, Grants: []moat.Grant{{Path: secretDir, Access: moat.READ}, {Path: outDir, Access: moat.WRITE}}}
	return cfg, secretDir, outDir
}

// TestSessionFilesLinkOut: links in the working directory to a secret
// outside, and to a writable directory outside, lead the file API nowhere.
func TestSessionFilesLinkOut(t *testing.T) {
	cfg, secretDir, outDir := outsideDirs(t)
	b := newFilesBox(t, cfg, nil)
	for _, l := range [][2]string{{"secretlink", filepath.Join(secretDir, "secret")}, {"secretdir", secretDir},
		{"rel", "../secretdir"}, {"out", outDir}} {
		if err := os.Symlink(l[1], filepath.Join(b.work, l[0])); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"secretlink", "secretdir/secret", "rel/secret", filepath.Join(b.work, "secretdir/secret")} {
		attack(t, "read "+p, func(t *testing.T, lifted bool) result {
			if lifted { // the sandbox itself reads through the same link
				return sh(t, b.sb, "cat "+p)
			}
			data, _, err := b.files.Read(p, 0)
			return result{Stdout: string(data), Err: err}
		}, func(r result) bool { return !strings.Contains(r.Stdout, "HOST-SECRET-7731") })
	}
	attack(t, "write through a link out", func(t *testing.T, lifted bool) result {
		target := filepath.Join(outDir, "planted")
		os.Remove(target)
		var r result
		if lifted {
			r = sh(t, b.sb, "echo PLANTED > out/planted")
		} else {
			_, err := b.files.Write("out/planted", []byte("PLANTED\n"), 0o644)
			r = result{Err: err}
		}
		got, _ := os.ReadFile(target)
		r.Stdout += "outside now holds: " + string(got)
		return r
	}, func(r result) bool { return !strings.Contains(r.Stdout, "PLANTED") })
	if _, err := b.files.Write("out/planted", []byte("x"), 0); apiCode(err) != session.CodePathRefused {
		t.Errorf("a write through a link out: %v; want %s", err, session.CodePathRefused)
	}
	if _, _, err := b.files.Read("secretlink", 0); apiCode(err) != session.CodeNotRegular {
		t.Errorf("a read of a final link: %v; want %s", err, session.CodeNotRegular)
	}
	// The host sees the secret through the same link: it is there.
	if got, err := os.ReadFile(filepath.Join(b.work, "secretdir/secret")); err != nil || !strings.Contains(string(got), "HOST-SECRET") {
		t.Errorf("control: the host reading through the link: %q %v", got, err)
	}
}

// TestSessionFilesDotDot: ".." out of the working directory, relative and
// absolute, is refused; the sandbox itself gets there by the same path.
func TestSessionFilesDotDot(t *testing.T) {
	cfg, _, _ := outsideDirs(t)
	b := newFilesBox(t, cfg, nil)
	if err := os.Mkdir(filepath.Join(b.work, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"../secretdir/secret", "sub/../../secretdir/secret", "../../" + strings.Repeat("../", 20) + filepath.Dir(b.work)[1:] + "/secretdir/secret",
		b.work + "/../secretdir/secret", b.work + "/sub/../../secretdir/secret"} {
		attack(t, "read "+p, func(t *testing.T, lifted bool) result {
			if lifted {
				return sh(t, b.sb, "cat '"+p+"'")
			}
			data, _, err := b.files.Read(p, 0)
			return result{Stdout: string(data), Err: err}
		}, func(r result) bool { return !strings.Contains(r.Stdout, "HOST-SECRET-7731") })
	}
	if _, _, err := b.files.Read("../secretdir/secret", 0); apiCode(err) != session.CodePathRefused {
		t.Errorf("a read of ../: %v; want %s", err, session.CodePathRefused)
	}
	if _, err := b.files.Write("sub/../../outdir/planted", []byte("x"), 0); apiCode(err) != session.CodePathRefused {
		t.Errorf("a write to ../: %v; want %s", err, session.CodePathRefused)
	}
	// ".." that stays inside is the kernel's to resolve, and works.
	if _, err := b.files.Write("sub/../inside.txt", []byte("in"), 0); err != nil {
		t.Errorf("a write by sub/..: %v", err)
	}
	if got, err := os.ReadFile(filepath.Join(b.work, "inside.txt")); err != nil || string(got) != "in" {
		t.Errorf("sub/../inside.txt: %q %v", got, err)
	}
}

// TestSessionFilesRenameRace: while the sandbox swaps a directory of the
// working directory with a link to a writable directory outside, as fast
// as it can, the file API writes and reads through it in a loop: never a
// byte outside. Control: a sandboxed process doing the same writes during
// the same race lands some outside.
func TestSessionFilesRenameRace(t *testing.T) {
	need(t, "python3")
	cfg, _, outDir := outsideDirs(t)
	writeFile(t, filepath.Join(outDir, "secret"), "OUTSIDE-SECRET-5519\n")
	b := newFilesBox(t, cfg, nil)
	swap := fmt.Sprintf(`import os, time
os.chdir(%q)
os.mkdir("real")
open("real/secret", "w").write("inside\n")
os.symlink(%q, "lnk")
end = time.time() + 60
while time.time() < end and not os.path.exists("stop"):
    os.rename("real", "d"); os.rename("d", "real")
    os.rename("lnk", "d"); os.rename("d", "lnk")
`, b.work, outDir)
	race := func(t *testing.T, body func(i int)) {
		os.Remove(filepath.Join(b.work, "stop"))
		c := b.sb.Command("python3", "-c", swap)
		var errb strings.Builder
		c.Stderr = &errb
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		for !exists(filepath.Join(b.work, "lnk")) {
			time.Sleep(10 * time.Millisecond)
		}
		for i := 0; i < 400; i++ {
			body(i)
		}
		writeFile(t, filepath.Join(b.work, "stop"), "")
		if err := c.Wait(); err != nil {
			t.Fatalf("the swapping loop: %v\n%s", err, errb.String())
		}
		os.RemoveAll(filepath.Join(b.work, "real"))
		os.Remove(filepath.Join(b.work, "lnk"))
		os.Remove(filepath.Join(b.work, "d"))
	}
	attack(t, "write and read during renames", func(t *testing.T, lifted bool) result {
		var mu sync.Mutex
		var r result
		ok := 0
		race(t, func(i int) {
			if lifted {
				if i%20 == 0 { // a process start costs more than an API call
					rr := sh(t, b.sb, `for i in $(seq 50); do echo RACED > d/raced 2>/dev/null; cat d/secret 2>/dev/null; done`)
					r.Stdout += rr.Stdout
				}
				return
			}
			if _, err := b.files.Write("d/raced", []byte("RACED\n"), 0o644); err == nil {
				ok++
			}
			data, _, _ := b.files.Read("d/secret", 0)
			mu.Lock()
			r.Stdout += string(data)
			mu.Unlock()
		})
		got, _ := os.ReadFile(filepath.Join(outDir, "raced"))
		os.Remove(filepath.Join(outDir, "raced"))
		r.Stdout = fmt.Sprintf("outside's raced: %q; API writes that succeeded: %d; read: %.200q", got, ok, r.Stdout)
		return r
	}, func(r result) bool {
		return !strings.Contains(r.Stdout, "RACED") && !strings.Contains(r.Stdout, "OUTSIDE-SECRET")
	})
}

// TestSessionFilesOtherSession: one session's file API, even handed
// another session's working directory as a place, cannot reach it: the
// server runs inside its own sandbox, where the other is out of view.
// Control: the other session's own file API reads it.
func TestSessionFilesOtherSession(t *testing.T) {
	other := newFilesBox(t, moat.Config{}, nil)
	writeFile(t, filepath.Join(other.work, "theirs.txt"), "OTHER-SESSION-2207\n")
	mine := newFilesBox(t, moat.Config{}, func(work string) []session.Place {
		return []session.Place{{Path: work, Writable: true}, {Path: other.work, Writable: true}}
	})
	for _, op := range []string{"read", "write"} {
		attack(t, op+" the other session's file", func(t *testing.T, lifted bool) result {
			f := mine.files
			if lifted {
				f = other.files
			}
			if op == "write" {
				_, err := f.Write(filepath.Join(other.work, "theirs.txt"), []byte("OVERWRITTEN\n"), 0o644)
				got, _ := os.ReadFile(filepath.Join(other.work, "theirs.txt"))
				writeFile(t, filepath.Join(other.work, "theirs.txt"), "OTHER-SESSION-2207\n")
				return result{Stdout: string(got), Err: err}
			}
			data, _, err := f.Read(filepath.Join(other.work, "theirs.txt"), 0)
			return result{Stdout: string(data), Err: err}
		}, func(r result) bool {
			if op == "write" {
				return !strings.Contains(r.Stdout, "OVERWRITTEN")
			}
			return !strings.Contains(r.Stdout, "OTHER-SESSION-2207")
		})
	}
}
