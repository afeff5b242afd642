//go:build linux

package moat_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/moattest"
)

// newSandbox is moattest.NewSandbox: the sandbox is closed when the test
// ends, and an error from Close fails it.
func newSandbox(t testing.TB, cfg moat.Config) *moat.Sandbox {
	t.Helper()
	return moattest.NewSandbox(t, cfg)
}

func TestCmdShapeMirrorsOSExec(t *testing.T) {
	sb := newSandbox(t, moat.Config{})
	t.Run("Output", func(t *testing.T) {
		out, err := sb.Command("echo", "hi").Output()
		if err != nil || string(out) != "hi\n" {
			t.Fatalf("Output = %q, %v", out, err)
		}
	})
	t.Run("CombinedOutput", func(t *testing.T) {
		out, err := sb.Command("sh", "-c", "echo out; echo err >&2").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "out") || !strings.Contains(string(out), "err") {
			t.Fatalf("CombinedOutput = %q, %v", out, err)
		}
	})
	t.Run("exit code and stderr", func(t *testing.T) {
		_, err := sb.Command("sh", "-c", "echo oops >&2; exit 42").Output()
		var ee *moat.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 42 || string(ee.Stderr) != "oops\n" {
			t.Fatalf("err = %#v", err)
		}
	})
	t.Run("signal", func(t *testing.T) {
		err := sb.Command("sh", "-c", "kill -KILL $$").Run()
		var ee *moat.ExitError
		if !errors.As(err, &ee) || ee.Signal() == nil || ee.StatusCode() != 137 || ee.ExitCode() != -1 {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("pipes", func(t *testing.T) {
		c := sb.Command("tr", "a-z", "A-Z")
		in, err := c.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := c.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		io.WriteString(in, "shout")
		in.Close()
		b, _ := io.ReadAll(out)
		if err := c.Wait(); err != nil || string(b) != "SHOUT" {
			t.Fatalf("got %q, %v", b, err)
		}
	})
	t.Run("stdin reader and Dir", func(t *testing.T) {
		if err := os.Mkdir(sb.WorkDir()+"/sub", 0o755); err != nil {
			t.Fatal(err)
		}
		c := sb.Command("sh", "-c", "cat; pwd")
		c.Stdin = strings.NewReader("data\n")
		c.Dir = "sub"
		out, err := c.Output()
		if err != nil || string(out) != "data\n"+sb.WorkDir()+"/sub\n" {
			t.Fatalf("got %q, %v", out, err)
		}
	})
	t.Run("ExtraFiles", func(t *testing.T) {
		r, w, _ := os.Pipe()
		defer r.Close()
		c := sb.Command("sh", "-c", "echo extra >&3")
		c.ExtraFiles = []*os.File{w}
		if err := c.Run(); err != nil {
			t.Fatal(err)
		}
		w.Close()
		b, _ := io.ReadAll(r)
		if string(b) != "extra\n" {
			t.Fatalf("got %q", b)
		}
	})
	t.Run("Env", func(t *testing.T) {
		c := sb.Command("sh", "-c", "echo $FOO $TMPDIR")
		c.Env = []string{"FOO=bar"}
		out, err := c.Output()
		// TMPDIR is the private temp, /tmp inside (workdir.go), never the workdir.
		if err != nil || string(out) != "bar /tmp\n" {
			t.Fatalf("got %q, %v", out, err)
		}
	})
	t.Run("Wait twice", func(t *testing.T) {
		c := sb.Command("true")
		if err := c.Run(); err != nil {
			t.Fatal(err)
		}
		if err := c.Wait(); err == nil {
			t.Fatal("second Wait succeeded")
		}
	})
}

func TestStartErrors(t *testing.T) {
	sb := newSandbox(t, moat.Config{})
	os.WriteFile(sb.WorkDir()+"/script.sh", []byte("#!/bin/sh\necho ran\n"), 0o755)
	cases := []struct {
		name string
		cmd  string
		kind error
	}{
		{"not found", "definitely-not-a-command", exec.ErrNotFound},
		{"missing path", "/nonexistent/tool", exec.ErrNotFound},
		{"not executable", "/etc/passwd", os.ErrPermission},
		{"in the workdir", sb.WorkDir() + "/script.sh", os.ErrPermission},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := sb.Command(tc.cmd).Run()
			if !errors.Is(err, tc.kind) || strings.HasPrefix(err.Error(), "moat: ") {
				t.Fatalf("err = %v, want %v", err, tc.kind)
			}
		})
	}
}

func TestContextKillsTree(t *testing.T) {
	sb := newSandbox(t, moat.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := sb.CommandContext(ctx, "sh", "-c", "sleep 30 & sleep 30").Run()
	if err == nil || time.Since(start) > 10*time.Second {
		t.Fatalf("err = %v after %v", err, time.Since(start))
	}
}

func TestTimeoutReason(t *testing.T) {
	sb := newSandbox(t, moat.Config{Limits: moat.Limits{Timeout: 200 * time.Millisecond}})
	err := sb.Command("sleep", "30").Run()
	var ee *moat.ExitError
	if !errors.As(err, &ee) || !strings.Contains(ee.Reason(), "timeout") || ee.StatusCode() != 137 {
		t.Fatalf("err = %v", err)
	}
}

func TestCloseRemovesWorkDirAndIsIdempotent(t *testing.T) {
	sb, err := moat.New(moat.Config{})
	if err != nil {
		t.Fatal(err)
	}
	wd := sb.WorkDir()
	c := sb.Command("sleep", "30")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(wd); !os.IsNotExist(err) {
		t.Fatalf("workdir still there: %v", err)
	}
	if err := c.Wait(); err == nil {
		t.Fatal("command survived Close")
	}
	if err := sb.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := sb.Command("true").Run(); !errors.Is(err, moat.ErrClosed) {
		t.Fatalf("Command after Close: %v", err)
	}
}

func TestSuppliedWorkDirIsKept(t *testing.T) {
	dir := t.TempDir()
	sb, err := moat.New(moat.Config{WorkDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.Command("sh", "-c", "echo kept > f").Run(); err != nil {
		t.Fatal(err)
	}
	sb.Close()
	if b, err := os.ReadFile(dir + "/f"); err != nil || string(b) != "kept\n" {
		t.Fatalf("supplied workdir lost: %q %v", b, err)
	}
}

func TestBadWorkDir(t *testing.T) {
	f := t.TempDir() + "/file"
	os.WriteFile(f, nil, 0o644)
	for _, wd := range []string{"/definitely/missing", f} {
		if _, err := moat.New(moat.Config{WorkDir: wd}); err == nil || !strings.Contains(err.Error(), wd) {
			t.Errorf("WorkDir %q: err = %v", wd, err)
		}
	}
}

func TestReportListsLayers(t *testing.T) {
	sb := newSandbox(t, moat.Config{})
	r := sb.Report()
	for _, name := range []string{"landlock", "seccomp", "network", "no-new-privs", "rlimits"} {
		if !r.Active(name) {
			t.Errorf("layer %s inactive on a host that has it:\n%s", name, r)
		}
	}
	if !strings.Contains(r.String(), "landlock") {
		t.Errorf("String() = %q", r.String())
	}
}

func TestConcurrentCommands(t *testing.T) {
	sb := newSandbox(t, moat.Config{})
	errc := make(chan error, 8)
	for i := 0; i < 8; i++ {
		go func() {
			out, err := sb.Command("echo", "x").Output()
			if err == nil && !bytes.Equal(out, []byte("x\n")) {
				err = errors.New("bad output " + string(out))
			}
			errc <- err
		}()
	}
	for i := 0; i < 8; i++ {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
}

func TestDeadZygoteIsReplaced(t *testing.T) {
	sb := newSandbox(t, moat.Config{})
	if err := sb.Command("true").Run(); err != nil {
		t.Fatal(err)
	}
	before := moattest.Zygotes()
	if len(before) != 1 {
		t.Fatalf("want one zygote, found %v", before)
	}
	syscall.Kill(before[0], syscall.SIGKILL)
	time.Sleep(50 * time.Millisecond)
	out, err := sb.Command("echo", "again").Output()
	if err != nil || string(out) != "again\n" {
		t.Fatalf("after the zygote died: %q, %v", out, err)
	}
	sb.Close()
	if left := moattest.Zygotes(); len(left) != 0 {
		t.Fatalf("zygotes left after Close: %v", left)
	}
}

func TestTerminalInsideSandboxHasAName(t *testing.T) {
	sb := newSandbox(t, moat.Config{})
	master, slave, ok, err := sb.OpenTerminal()
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Skip("SKIPPING: this host gives the sandbox no /dev/pts of its own (no mount namespace)")
	}
	defer master.Close()
	c := sb.Command("tty")
	c.Stdin, c.Stdout, c.Stderr = slave, slave, slave
	c.Setctty = true
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	out, _ := io.ReadAll(master) // ends with EIO once tty exits
	if err := c.Wait(); err != nil || !strings.HasPrefix(string(out), "/dev/pts/") {
		t.Fatalf("tty printed %q, %v", out, err)
	}
}

func TestCommandGetsOnlyItsDescriptors(t *testing.T) {
	sb := newSandbox(t, moat.Config{})
	r, w, _ := os.Pipe()
	defer r.Close()
	defer w.Close()
	for _, tc := range []struct {
		name  string
		extra []*os.File
		want  string
	}{
		{"stdio only", nil, "0 1 2 3"}, // 3 is ls's own handle on the directory
		{"one extra", []*os.File{w}, "0 1 2 3 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := sb.Command("sh", "-c", `ls /proc/self/fd | tr '\n' ' '`)
			c.ExtraFiles = tc.extra
			out, err := c.Output()
			if err != nil || strings.TrimSpace(string(out)) != tc.want {
				t.Fatalf("descriptors %q, %v; want %q", out, err, tc.want)
			}
		})
	}
}

// A long-lived sandbox keeps working: its zygote and init run for as long as
// commands keep coming (a double close in the init once killed it after a
// few dozen commands, once the garbage collector ran).
func TestManyCommandsInOneSandbox(t *testing.T) {
	sb := newSandbox(t, moat.Config{})
	for i := 0; i < 300; i++ {
		if err := sb.Command("/bin/true").Run(); err != nil {
			t.Fatalf("command %d: %v", i, err)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// hostRun runs a command on the host and returns its combined output.
func hostRun(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	return string(out), err
}
