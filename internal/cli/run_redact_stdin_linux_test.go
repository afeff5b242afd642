package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunRedactStdinAccessMode: readOnlyStdin replaces every stdin open
// for writing, whatever its type, and passes a read-only one as it is.
func TestRunRedactStdinAccessMode(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("input\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	open := func(p string, flag int) *os.File {
		f, err := os.OpenFile(p, flag, 0)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, tc := range []struct {
		name     string
		in       *os.File
		replaced bool
	}{
		{"pipe write end (0>&1)", pw, true},
		{"file read-write (0<>file)", open(file, os.O_RDWR), true},
		{"file write-only", open(file, os.O_WRONLY), true},
		{"fifo read-write", open(fifo, os.O_RDWR), true},
		{"file read-only", open(file, os.O_RDONLY), false},
		{"pipe read end", pr, false},
		{"dev null read-only", open(os.DevNull, os.O_RDONLY), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := readOnlyStdin(tc.in)
			if (got != tc.in) != tc.replaced {
				t.Fatalf("replaced %v, want %v", got != tc.in, tc.replaced)
			}
			if openForWriting(got) {
				t.Fatalf("the command's stdin is open for writing")
			}
		})
	}
}

// TestRunRedactWritableStdin: a command given a stdin open for writing
// (a pipe's write end, a file or FIFO opened read-write) cannot write a
// secret through it past the redactor; without --redact it can (the
// control).
func TestRunRedactWritableStdin(t *testing.T) {
	const key = "AKIAIOSFODNN7EXAMPLE"
	script := "printf '" + key + "\\n' >&0; echo done"
	for _, kind := range []string{"pipe", "file", "fifo"} {
		for _, redactOn := range []bool{true, false} {
			name := kind + "/control"
			if redactOn {
				name = kind + "/redact"
			}
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				var stdin *os.File
				var readBack func() string
				switch kind {
				case "pipe":
					pr, pw, err := os.Pipe()
					if err != nil {
						t.Fatal(err)
					}
					defer pr.Close()
					stdin = pw
					readBack = func() string {
						pr.SetReadDeadline(time.Now().Add(time.Second))
						b := make([]byte, 4096)
						n, _ := pr.Read(b)
						return string(b[:max(n, 0)])
					}
				case "file":
					p := filepath.Join(dir, "f")
					f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
					if err != nil {
						t.Fatal(err)
					}
					stdin = f
					readBack = func() string { b, _ := os.ReadFile(p); return string(b) }
				case "fifo":
					p := filepath.Join(dir, "fifo")
					if err := syscall.Mkfifo(p, 0o600); err != nil {
						t.Fatal(err)
					}
					f, err := os.OpenFile(p, os.O_RDWR, 0)
					if err != nil {
						t.Fatal(err)
					}
					rd, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
					if err != nil {
						t.Fatal(err)
					}
					defer rd.Close()
					stdin = f
					readBack = func() string {
						rd.SetReadDeadline(time.Now().Add(time.Second))
						b := make([]byte, 4096)
						n, _ := rd.Read(b)
						return string(b[:max(n, 0)])
					}
				}
				args := []string{"run"}
				if redactOn {
					args = append(args, "--redact")
				}
				args = append(args, "--", "sh", "-c", script)
				r := runMoatRedact(t, stdin, args...)
				got := readBack()
				stdin.Close()
				if r.code != 0 || !strings.Contains(r.stdout, "done") {
					t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
				}
				if leaked := strings.Contains(got, key) || strings.Contains(r.stdout, key); leaked == redactOn {
					t.Fatalf("secret through stdin: %v with --redact %v (read %q)", leaked, redactOn, got)
				}
			})
		}
	}
}
