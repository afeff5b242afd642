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

// printAtStart prints, unless quiet, the refusals the sandbox recorded
// before its command started (the pre-start checks: a variable or an
// argument naming a place the sandbox cannot see), at once, so that they
// are seen even if the command then hangs.
func printAtStart(sb *moat.Sandbox, w io.Writer, quiet bool) {
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
