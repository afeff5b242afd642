package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"golang.org/x/term"

	"github.com/moat-sandbox/moat/internal/termsafe"

	"github.com/moat-sandbox/moat"
)

// maxSummaryLines bounds the refusal summary that run and shell print at
// exit: the first lines, then one that counts the rest.
const maxSummaryLines = 10

// quietUsage is the help text of --quiet, shared by run and shell.
const quietUsage = "do not print, at exit, the summary of what the sandbox was refused"

// finish closes sb once the command is done, then prints what the sandbox
// was refused (Close adds what it neutralised, so the summary comes after
// it) unless quiet, and returns the outcome of the run: runErr, or Close's
// error when the command itself succeeded. A Close error that comes with a
// failed command is printed, so it is never lost.
// rep, if not nil, learns how the command ended (reportjson.go).
func finish(sb *moat.Sandbox, w io.Writer, quiet bool, rep *reportJSON, runErr error) error {
	rep.done(runErr)
	closeErr := sb.Close()
	var printed []string
	if !quiet {
		printed = printRefusals(w, notPrintedYet(sb)) // early.go
	}
	if closeErr != nil {
		if runErr == nil {
			return failf("close: %s", closeErr)
		}
		fmt.Fprintln(w, errorLine(fmt.Errorf("close: %s", closeErr)))
	}
	var exited *moat.ExitError
	if errors.As(runErr, &exited) && slices.Contains(printed, strings.TrimSpace(exited.Reason())) {
		// The summary said which limit ended the command; the reason
		// line would say it again.
		code, _ := exitedCode(exited)
		return &exitStatus{code: code, cause: exited}
	}
	return runErr
}

// printRefusals writes one "moat: " line per refusal, at most
// maxSummaryLines in all, and returns the refusals it printed, as
// Refusal.String gives them.
//
// The lines that count refusals not listed one by one (their subject
// starts "more ": "more names", "more sockets") are always printed, after
// the first ones: a sandbox that fills the summary with harmless refusals
// cannot hide that others went unlisted.
func printRefusals(w io.Writer, rs []moat.Refusal) (printed []string) {
	shown := rs
	hidden := 0
	if len(rs) > maxSummaryLines {
		var first, counts []moat.Refusal
		for _, r := range rs {
			if strings.HasPrefix(r.Subject, "more ") {
				counts = append(counts, r)
			} else {
				first = append(first, r)
			}
		}
		room := max(maxSummaryLines-1-len(counts), 0)
		if room < len(first) {
			hidden = len(first) - room
			first = first[:room]
		}
		shown = append(first, counts...)
	}
	var b strings.Builder
	if len(shown) > 0 && isTerminal(w) {
		// The command may have left the terminal concealing text, in
		// colours that hide it, or drawing lines for letters: put back
		// the plain rendition first, so that the lines are seen.
		b.WriteString(plainRendition)
	}
	for _, r := range shown {
		printed = append(printed, r.String())
		b.WriteString("moat: " + printable(r.String()) + "\n")
	}
	if hidden > 0 {
		fmt.Fprintf(&b, "moat: ... and %d more\n", hidden)
	}
	_, _ = io.WriteString(w, b.String())
	return printed
}

// plainRendition resets the terminal's graphic rendition (SGR 0: no
// concealed text, default colours), designates ASCII as G0 and shifts in
// to it, undoing what a command's output may have left for moat's lines.
const plainRendition = "\x1b[0m\x1b(B\x0f"

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// printable makes s safe to print on a terminal as one line: control
// characters, invalid UTF-8 and the characters that reorder text are
// written as escapes (internal/termsafe). What a sandbox named (a host, a
// path) must not move the cursor or recolour the user's terminal.
func printable(s string) string { return termsafe.Escape(s, false) }
