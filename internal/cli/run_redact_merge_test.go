package cli

import (
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestRunRedactSameDestination: when standard output and error reach one
// place, a key written half on each stream reaches the reader as neither
// half; the control, two pipes into that one place (the old way), lets
// both halves through.
func TestRunRedactSameDestination(t *testing.T) {
	for _, tc := range []struct {
		name  string
		merge bool
		leaks bool
	}{
		{"one pipe for both", true, false},
		{"control: two pipes into one place", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.merge {
				old := mergeSameDestination
				mergeSameDestination = func(*os.File, *os.File) bool { return false }
				defer func() { mergeSameDestination = old }()
			}
			r, w, _ := os.Pipe()
			dup, err := os.OpenFile("/dev/fd/"+strconv.Itoa(int(w.Fd())), os.O_WRONLY, 0)
			if err != nil {
				dup = w
			}
			got := readAllAsync(r)
			f := &runRedactFlag{engine: "rules"}
			err = f.wrap(stdio{out: w, err: dup}, func(std stdio) error {
				io.WriteString(std.out, "key: AKIAIOSF")
				io.WriteString(std.err, "ODNN7EXAMPLE\n")
				return nil
			})
			w.Close()
			dup.Close()
			if err != nil {
				t.Fatal(err)
			}
			out := <-got
			leaked := strings.Contains(out, "AKIAIOSF") || strings.Contains(out, "ODNN7EXAMPLE")
			if leaked != tc.leaks {
				t.Errorf("output %q: leaked %v, want %v", out, leaked, tc.leaks)
			}
		})
	}
	if !sameDestination(os.Stdin, os.Stdin) {
		t.Error("a file is not its own destination")
	}
	_, a, _ := os.Pipe()
	_, b, _ := os.Pipe()
	defer a.Close()
	defer b.Close()
	if sameDestination(a, b) || !sameDestination(b, b) {
		t.Error("two pipes are not told apart")
	}
}
