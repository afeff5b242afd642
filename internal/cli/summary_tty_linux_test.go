package cli

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/moat-sandbox/moat"
)

// TestSummaryResetsTerminal: on a terminal, the refusal lines come after
// a reset of the rendition, so that a command that left the terminal
// concealing text (ESC[8m) or drawing lines for letters cannot hide them.
// Controls: to a pipe nothing is added, and with nothing to print nothing
// is written at all.
func TestSummaryResetsTerminal(t *testing.T) {
	rs := []moat.Refusal{{Kind: "dns", Subject: "example.com", Detail: "the sandbox has no network"}}
	tests := []struct {
		name      string
		tty       bool
		refusals  []moat.Refusal
		wantReset bool
		wantEmpty bool
	}{
		{name: "terminal", tty: true, refusals: rs, wantReset: true},
		{name: "control: pipe", tty: false, refusals: rs},
		{name: "control: terminal, nothing refused", tty: true, wantEmpty: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out []byte
			if tc.tty {
				ptm, pts, err := pty.Open()
				if err != nil {
					t.Fatal(err)
				}
				defer ptm.Close()
				printRefusals(pts, tc.refusals)
				pts.Close()
				done := make(chan []byte)
				go func() { b, _ := io.ReadAll(ptm); done <- b }()
				select {
				case out = <-done:
				case <-time.After(5 * time.Second):
					t.Fatal("reading the pty timed out")
				}
			} else {
				var b bytes.Buffer
				printRefusals(&b, tc.refusals)
				out = b.Bytes()
			}
			s := string(out)
			switch {
			case tc.wantEmpty && s != "":
				t.Fatalf("nothing refused, yet %q was written", s)
			case tc.wantReset && !strings.HasPrefix(s, plainRendition+"moat: dns: example.com"):
				t.Fatalf("on a terminal the lines should follow the reset: %q", s)
			case !tc.wantReset && strings.Contains(s, "\x1b"):
				t.Fatalf("to a pipe no escape belongs in the output: %q", s)
			}
		})
	}
}
