package cli

import (
	"io"
	"sync"

	"github.com/moat-sandbox/moat"
)

// printedEarly remembers, per sandbox, how many of its refusals were
// printed when its command started, so that the summary at exit does not
// print them again. Refusals only grow, oldest first.
var printedEarly sync.Map // *moat.Sandbox -> int

// printAtStart runs cmd's pre-start checks and prints, unless quiet, what
// the sandbox was refused so far (a variable or an argument naming a place
// it cannot see), before cmd starts: so that the lines come before the
// command's own output, and are seen even if it then hangs.
func printAtStart(sb *moat.Sandbox, cmd *moat.Cmd, w io.Writer, quiet bool) {
	cmd.Check()
	rs := sb.Refusals()
	if quiet || len(rs) == 0 {
		return
	}
	printRefusals(w, rs)
	printedEarly.Store(sb, len(rs))
}

// notPrintedYet returns the refusals of sb that printAtStart did not
// print, and forgets sb.
func notPrintedYet(sb *moat.Sandbox) []moat.Refusal {
	rs := sb.Refusals()
	if n, ok := printedEarly.LoadAndDelete(sb); ok {
		rs = rs[min(n.(int), len(rs)):]
	}
	return rs
}
