//go:build linux

package escape_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// moatTermCLI returns a command that runs the moat command line with args
// in a fresh working directory.
func moatTermCLI(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	return moatCLICmd(t, t.TempDir(), nil, args...)
}

// onPty runs cmd with the given streams on a new terminal's slave (the
// others are files in a temporary directory), and returns what the master
// read, with the slave's modes after cmd ended.
func onPty(t *testing.T, cmd *exec.Cmd, in, out, errOut bool) (string, *unix.Termios) {
	t.Helper()
	master, slave, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	defer slave.Close()
	null, _ := os.Open(os.DevNull)
	defer null.Close()
	files, _ := os.Create(filepath.Join(t.TempDir(), "other"))
	defer files.Close()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = null, files, files
	if in {
		cmd.Stdin = slave
	}
	if out {
		cmd.Stdout = slave
	}
	if errOut {
		cmd.Stderr = slave
	}
	got := make(chan string, 1)
	go func() {
		var b bytes.Buffer
		io.Copy(&b, master)
		got <- b.String()
	}()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("command did not end")
	}
	tio, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	master.SetReadDeadline(time.Now().Add(2 * time.Second))
	slave.Close()
	select {
	case s := <-got:
		return s, tio
	case <-time.After(5 * time.Second):
		return "", tio
	}
}

// A sandboxed command that holds the terminal (moat run gives it the
// terminal itself) switches echo and line editing off; moat puts the
// terminal's modes back when it exits, also when it is stopped by a signal.
// Control: the same stty on the host leaves the terminal raw.
func TestTerminalModesRestoredAttack(t *testing.T) {
	const probe = "stty raw -echo; echo changed"
	tests := []struct {
		name     string
		cmd      func(t *testing.T) *exec.Cmd
		signal   bool
		restored bool
	}{
		{"control: on the host", func(t *testing.T) *exec.Cmd { return exec.Command("sh", "-c", probe) }, false, false},
		{"moat run", func(t *testing.T) *exec.Cmd { return moatTermCLI(t, "run", "--", "sh", "-c", probe) }, false, true},
		{"moat run, stopped by SIGTERM", func(t *testing.T) *exec.Cmd {
			return moatTermCLI(t, "run", "--", "sh", "-c", probe+"; sleep 60")
		}, true, true},
		{"moat run in a background job", func(t *testing.T) *exec.Cmd {
			// A job-control shell on the terminal runs moat in the
			// background: putting the modes back must not stop it (SIGTTOU).
			m := moatTermCLI(t, "run", "--", "sh", "-c", probe)
			cmd := exec.Command("sh", "-c", `set -m; "$0" "$@" & wait $!; echo "moat exit=$?"`)
			cmd.Args = append(cmd.Args, m.Args...)
			cmd.Dir, cmd.Env = m.Dir, m.Env
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
			return cmd
		}, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := tc.cmd(t)
			if tc.signal {
				go func() {
					time.Sleep(3 * time.Second)
					if cmd.Process != nil {
						cmd.Process.Signal(syscall.SIGTERM)
					}
				}()
			}
			out, tio := onPty(t, cmd, true, true, true)
			if !strings.Contains(out, "changed") {
				t.Fatalf("the probe did not run: %q", out)
			}
			if strings.Contains(out, "moat exit=") && !strings.Contains(out, "moat exit=0") {
				t.Errorf("background moat: %q", out)
			}
			echo := tio.Lflag&unix.ECHO != 0
			canon := tio.Lflag&unix.ICANON != 0
			if (echo && canon) != tc.restored {
				t.Errorf("after the run: echo %v, icanon %v; want restored %v", echo, canon, tc.restored)
			}
		})
	}
}

// With --redact, output bound for a terminal loses clipboard writes, title
// changes and terminal queries, and a key cut by an ANSI reset is redacted
// whole; colors pass. Control: without --redact the command holds the
// terminal itself and all of it arrives (GUARANTEES lists plain moat run as
// not covered).
func TestTerminalRedactFilterAttack(t *testing.T) {
	const script = `printf 'A\033]52;c;ZXZpbA==\007B\033[6nC\033]0;evil\007D\033[31mred\033[0m key AKIA\033[0mIOSFODNN7EXAMPLE\n'`
	bad := []string{"\x1b]52", "\x1b[6n", "\x1b]0;", "IOSFODNN7EXAMPLE"}
	for _, tc := range []struct {
		name   string
		args   []string
		leaked bool
	}{
		{"control: plain run", []string{"run", "--", "sh", "-c", script}, true},
		{"run --redact", []string{"run", "--redact", "--", "sh", "-c", script}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _ := onPty(t, moatTermCLI(t, tc.args...), false, true, false)
			if !strings.Contains(out, "ABCD") && !strings.Contains(out, "A\x1b]52") {
				t.Fatalf("the probe's text did not arrive: %q", out)
			}
			if !strings.Contains(out, "\x1b[31mred") {
				t.Errorf("colors did not pass: %q", out)
			}
			for _, b := range bad {
				if strings.Contains(out, b) != tc.leaked {
					t.Errorf("%q in the terminal's output: %v, want %v (output %q)", b, !tc.leaked, tc.leaked, out)
				}
			}
		})
	}
}

// With --redact and standard output and error in one place (2>&1), a key
// written half on each stream reaches the file as neither half. Control:
// the same probe with the streams in two files gets each half through the
// redactor, so the test shows the split is the attack.
func TestRedactSameDestinationAttack(t *testing.T) {
	const script = `printf 'key AKIAIOSF'; printf 'ODNN7EXAMPLE\n' >&2`
	for _, tc := range []struct {
		name  string
		same  bool
		leaks bool
	}{
		{"control: two files", false, true},
		{"one file (2>&1)", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			outF, _ := os.Create(filepath.Join(dir, "out"))
			errF := outF
			if !tc.same {
				errF, _ = os.Create(filepath.Join(dir, "err"))
			}
			cmd := moatTermCLI(t, "run", "--redact", "--", "sh", "-c", script)
			cmd.Stdout, cmd.Stderr = outF, errF
			if err := cmd.Run(); err != nil {
				t.Fatalf("moat run: %v", err)
			}
			outF.Close()
			errF.Close()
			var all string
			for _, n := range []string{"out", "err"} {
				b, _ := os.ReadFile(filepath.Join(dir, n))
				all += string(b)
			}
			leaked := strings.Contains(all, "AKIAIOSF") && strings.Contains(all, "ODNN7EXAMPLE")
			if leaked != tc.leaks {
				t.Errorf("both halves reached the reader: %v, want %v (%q)", leaked, tc.leaks, all)
			}
		})
	}
}

// moat shell relays the session's output but drops clipboard writes
// (OSC 52); its programs' queries pass, since an interactive program needs
// the answers (the control: OSC 11 arrives).
func TestTerminalShellClipboardAttack(t *testing.T) {
	cmd := moatTermCLI(t, "shell", "--shell", "/bin/sh")
	master, slave, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	got := make(chan string, 1)
	go func() {
		var b bytes.Buffer
		io.Copy(&b, master)
		got <- b.String()
	}()
	time.Sleep(2 * time.Second)
	io.WriteString(master, `printf 'X\033]52;c;ZXZpbA==\007Y\033]11;?\007Z\n'; exit`+"\n")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("moat shell did not end")
	}
	master.SetReadDeadline(time.Now().Add(2 * time.Second))
	out := <-got
	if !strings.Contains(out, "XY\x1b]11;?\x07Z") {
		t.Fatalf("the probe's output did not arrive as expected: %q", out)
	}
	if strings.Contains(out, "\x1b]52") {
		t.Errorf("OSC 52 reached the terminal: %q", out)
	}
}
