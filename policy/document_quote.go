package policy

import "strconv"

// quoteOdd returns s quoted (as %q would) when it holds a character that
// is not printable, so that no control character of a document reaches a
// terminal; a plain key stays as it is, the way Heimdall writes it
// ("unknown policy field: bogus").
func quoteOdd(s string) string {
	if q := strconv.Quote(s); q[1:len(q)-1] != s {
		return q
	}
	return s
}
