package cli

import (
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// TestTtySaveTerminals: whatever is done to the terminals among the
// streams (raw, no echo), the restore puts their modes back; a terminal
// given on several streams is saved once; files are left alone.
func TestTtySaveTerminals(t *testing.T) {
	master, slave, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	defer slave.Close()
	null, _ := os.Open(os.DevNull)
	defer null.Close()
	before, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		std  stdio
	}{
		{"all three on the terminal", stdio{in: slave, out: slave, err: slave}},
		{"output only", stdio{in: null, out: slave, err: null}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			restore := saveTerminals(tc.std)
			if _, err := term.MakeRaw(int(slave.Fd())); err != nil {
				t.Fatal(err)
			}
			raw, _ := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
			if raw.Lflag&unix.ICANON != 0 {
				t.Fatal("MakeRaw did not change the modes: the test proves nothing")
			}
			restore()
			after, _ := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
			if after.Lflag != before.Lflag || after.Iflag != before.Iflag || after.Oflag != before.Oflag {
				t.Errorf("modes not restored: lflag %#x, want %#x", after.Lflag, before.Lflag)
			}
		})
	}
	saveTerminals(stdio{in: null, out: null, err: null})() // no terminal: nothing to do
}

// TestTerminalOutputFilters: with --redact, output bound for a terminal
// loses clipboard writes and queries; bound for a file it is left as it is.
func TestTerminalOutputFilters(t *testing.T) {
	master, slave, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	got := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(master)
		got <- string(b)
	}()
	const probe = "a\x1b]52;c;ZXZpbA==\x07b\x1b[6nc\x1b[31md\n"
	f := &runRedactFlag{engine: "rules"}
	if err := f.wrap(stdio{out: slave, err: slave}, func(std stdio) error {
		_, err := io.WriteString(std.out, probe)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	slave.Close()
	master.SetReadDeadline(time.Now().Add(2 * time.Second))
	out := <-got
	if !strings.Contains(out, "abc\x1b[31md") || strings.Contains(out, "\x1b]52") || strings.Contains(out, "\x1b[6n") {
		t.Errorf("terminal got %q", out)
	}
	file, _ := os.CreateTemp(t.TempDir(), "out")
	defer file.Close()
	if err := f.wrap(stdio{out: file, err: file}, func(std stdio) error {
		_, err := io.WriteString(std.out, probe)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(file.Name())
	if string(b) != probe {
		t.Errorf("a file got %q, want the output as it was", b)
	}
}
