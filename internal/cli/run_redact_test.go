package cli

import (
	"errors"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/moat-sandbox/moat/redact"
)

// failingEngine fails on any text that contains FAILNOW, and from then
// on: a redactor that breaks in the middle of a stream.
const failingEngine = "test-fails-mid-stream"

var failing atomic.Bool

func init() {
	redact.Register(failingEngine, func(redact.Options) (redact.Detector, error) {
		return redact.DetectorFunc(func(text string) ([]redact.Finding, error) {
			if failing.Load() || strings.Contains(text, "FAILNOW") {
				failing.Store(true)
				return nil, errors.New("engine broke")
			}
			return redact.NewRules().Detect(text)
		}), nil
	})
}

// readAllAsync collects what r yields until EOF.
func readAllAsync(r io.Reader) <-chan string {
	c := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(r)
		c <- string(b)
	}()
	return c
}

// TestRunRedactFailureStopsOutput: when the redactor fails mid-stream,
// nothing raw comes out after it, moat says so in one line, the command
// is not blocked (its later output is drained) and moat exits 125.
func TestRunRedactFailureStopsOutput(t *testing.T) {
	failing.Store(false)
	outR, outW, _ := os.Pipe()
	errR, errW, _ := os.Pipe()
	gotOut, gotErr := readAllAsync(outR), readAllAsync(errR)
	f := &runRedactFlag{engine: failingEngine}
	err := f.wrap(stdio{in: nil, out: outW, err: errW}, func(std stdio) error {
		io.WriteString(std.out, "first AKIAIOSFODNN7EXAMPLE\n")
		io.WriteString(std.out, "FAILNOW raw\n")
		buf := []byte(strings.Repeat("RAWSECRET-after-failure\n", 1000))
		for range 100 {
			if _, err := std.out.Write(buf); err != nil {
				return err
			}
		}
		return nil
	})
	outW.Close()
	errW.Close()
	out, stderr := <-gotOut, <-gotErr
	var st *exitStatus
	if !errors.As(err, &st) || st.code != exitFailure {
		t.Fatalf("wrap = %v; want exit status %d", err, exitFailure)
	}
	if strings.Contains(out, "RAWSECRET") || strings.Contains(out, "AKIA") || strings.Contains(out, "FAILNOW") {
		t.Fatalf("raw output leaked: %q", out[:min(len(out), 200)])
	}
	if out != "" && out != "first [REDACTED:secret]\n" {
		t.Fatalf("stdout %q", out)
	}
	if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "moat: redact: standard output stopped: ") || !strings.Contains(stderr, "engine broke") {
		t.Fatalf("stderr %q; want one moat line naming the failure", stderr)
	}
}

// TestRunRedactOffPassesThrough: without --redact wrap hands the real
// streams to the command.
func TestRunRedactOffPassesThrough(t *testing.T) {
	std := stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr}
	var f *runRedactFlag
	called := false
	err := f.wrap(std, func(got stdio) error {
		called = true
		if got != std {
			t.Error("streams replaced without --redact")
		}
		return nil
	})
	if err != nil || !called {
		t.Fatalf("wrap = %v, called %v", err, called)
	}
	if err := (&runRedactFlag{}).wrap(std, func(got stdio) error {
		if got != std {
			t.Error("streams replaced with --redact off")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
