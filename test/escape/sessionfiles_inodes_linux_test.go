//go:build linux

package escape_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/session"
)

// TestSessionFilesHardLink: a write at a name that is a hard link of a
// file elsewhere replaces the name and leaves the other link's inode as
// it was. Control: an ordinary write through the name changes both.
func TestSessionFilesHardLink(t *testing.T) {
	b := newFilesBox(t, moat.Config{}, nil)
	victim := filepath.Join(t.TempDir(), "victim")
	attack(t, "write at a hard link", func(t *testing.T, lifted bool) result {
		writeFile(t, victim, "ORIGINAL\n")
		name := filepath.Join(b.work, "linked")
		os.Remove(name)
		if err := os.Link(victim, name); err != nil {
			t.Fatal(err)
		}
		var r result
		if lifted {
			r.Err = os.WriteFile(name, []byte("REPLACED\n"), 0o644)
		} else {
			_, r.Err = b.files.Write("linked", []byte("REPLACED\n"), 0o644)
		}
		got, _ := os.ReadFile(victim)
		mine, _ := os.ReadFile(name)
		r.Stdout = fmt.Sprintf("victim: %q; name: %q", got, mine)
		if !lifted && string(mine) != "REPLACED\n" {
			t.Errorf("the API's write did not replace the name: %s (%v)", r.Stdout, r.Err)
		}
		return r
	}, func(r result) bool { return strings.HasPrefix(r.Stdout, `victim: "ORIGINAL\n"`) })
}

// TestSessionFilesFIFO: a read of a FIFO answers not_regular_file at once,
// where a plain open would block until a writer came; a write at a FIFO's
// name replaces it with a file.
func TestSessionFilesFIFO(t *testing.T) {
	b := newFilesBox(t, moat.Config{}, nil)
	fifo := filepath.Join(b.work, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	attack(t, "read a FIFO", func(t *testing.T, lifted bool) result {
		start := time.Now()
		var r result
		if lifted { // a plain process opening it blocks
			c := exec.Command("cat", fifo)
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- c.Wait() }()
			select {
			case r.Err = <-done:
			case <-time.After(time.Second):
				c.Process.Kill()
				<-done
				r.Err = fmt.Errorf("still blocked after a second")
			}
		} else {
			_, _, r.Err = b.files.Read("fifo", 0)
		}
		r.Stdout = fmt.Sprintf("answered after %v with %q", time.Since(start), apiCode(r.Err))
		return r
	}, func(r result) bool {
		return strings.Contains(r.Stdout, session.CodeNotRegular) && !strings.Contains(fmt.Sprint(r.Err), "still blocked")
	})
	if st, err := b.files.Stat("fifo"); err != nil || st.Type != "fifo" {
		t.Errorf("Stat of the FIFO: %+v %v", st, err)
	}
	if _, err := b.files.Write("fifo", []byte("now a file\n"), 0o644); err != nil {
		t.Fatalf("a write at the FIFO's name: %v", err)
	}
	if fi, err := os.Lstat(fifo); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the FIFO was not replaced by a file: %v %v", fi, err)
	}
}

// TestSessionFilesProtectedPath: the file API cannot write what the
// sandbox cannot: a git repository's hooks (read-only in the sandbox),
// even in the writable working directory. Control: the same write to an
// ordinary directory of it works.
func TestSessionFilesProtectedPath(t *testing.T) {
	need(t, "git")
	w := filepath.Join(t.TempDir(), "repo")
	if err := os.Mkdir(w, 0o755); err != nil {
		t.Fatal(err)
	}
	if r := hostSh(t, "cd "+w+" && git init -q . && mkdir -p plain/hooks"); r.Code != 0 {
		t.Fatal(r)
	}
	b := newFilesBox(t, moat.Config{WorkDir: w}, nil)
	attack(t, "write a git hook", func(t *testing.T, lifted bool) result {
		dir := ".git/hooks"
		if lifted {
			dir = "plain/hooks"
		}
		_, err := b.files.Write(dir+"/pre-commit", []byte("#!/bin/sh\necho HOOKED\n"), 0o755)
		got, _ := os.ReadFile(filepath.Join(w, dir, "pre-commit"))
		return result{Stdout: string(got), Err: err}
	}, func(r result) bool { return !strings.Contains(r.Stdout, "HOOKED") })
	if _, err := b.files.Write(".git/hooks/pre-commit", []byte("x"), 0o755); apiCode(err) != session.CodePathRefused {
		t.Errorf("a write to .git/hooks: %v; want %s", err, session.CodePathRefused)
	}
	if _, err := b.files.Write(".git/config", []byte("[core]\n"), 0o644); apiCode(err) != session.CodePathRefused {
		t.Errorf("a write to .git/config: %v; want %s", err, session.CodePathRefused)
	}
}

// TestSessionFilesReadOnlyGrant: a read-only grant handed to the file API
// as a writable place still cannot be written, since the server has only
// the sandbox's rights. Control: the same grant made writable.
func TestSessionFilesReadOnlyGrant(t *testing.T) {
	attack(t, "write a read-only grant", func(t *testing.T, lifted bool) result {
		g := t.TempDir()
		writeFile(t, filepath.Join(g, "f"), "GRANTED\n")
		access := moat.READ
		if lifted {
			access = moat.WRITE
		}
		b := newFilesBox(t, moat.Config{Grants: []moat.Grant{{Path: g, Access: access}}}, func(work string) []session.Place {
			return []session.Place{{Path: work, Writable: true}, {Path: g, Writable: true}}
		})
		_, err := b.files.Write(filepath.Join(g, "f"), []byte("CHANGED\n"), 0o644)
		_, err2 := b.files.Write(filepath.Join(g, "new"), []byte("CHANGED\n"), 0o644)
		got, _ := os.ReadFile(filepath.Join(g, "f"))
		got2, _ := os.ReadFile(filepath.Join(g, "new"))
		return result{Stdout: string(got) + string(got2), Err: fmt.Errorf("%v; %v", err, err2)}
	}, func(r result) bool { return !strings.Contains(r.Stdout, "CHANGED") })
	// Declared read-only, it is refused before the kernel is asked.
	g := t.TempDir()
	b := newFilesBox(t, moat.Config{Grants: []moat.Grant{{Path: g, Access: moat.WRITE}}}, func(work string) []session.Place {
		return []session.Place{{Path: work, Writable: true}, {Path: g, Writable: false}}
	})
	if _, err := b.files.Write(filepath.Join(g, "f"), []byte("x"), 0); apiCode(err) != session.CodePathRefused {
		t.Errorf("a write to a read-only place: %v; want %s", err, session.CodePathRefused)
	}
}
