package redact

import "strings"

// lookBehind is how much of a long line the writer carries, after cutting
// it, into the next detection: more than a key (maxKeyLen) and the longest
// value a context rule reads after it (maxValueLen), so a rule that needs
// the key word before the cut still finds the value after it.
const lookBehind = 8 << 10

// pemContext is the detection context after a forced flush inside an open
// PEM private key block: the rules go on treating the following body lines
// as part of the block until its END line or a line that cannot be in it.
const pemContext = "-----BEGIN PRIVATE KEY-----\n"

// dropContext returns the spans of ctx+text moved to offsets in text: a
// span wholly inside ctx (already emitted) is dropped, one that starts in
// ctx and runs on is cut to start at text's beginning. spans is sorted and
// disjoint, as Normalize returns; so is the result.
func dropContext(spans []Finding, ctx int) []Finding {
	if ctx == 0 {
		return spans
	}
	out := spans[:0]
	for _, s := range spans {
		if s.End <= ctx {
			continue
		}
		s.Start = max(s.Start, ctx) - ctx
		s.End -= ctx
		out = append(out, s)
	}
	return out
}

// carryContext returns the context for the next detection after emitting
// emitted (which followed ctx): nothing when the emit ended a line, else
// the last lookBehind bytes of the line emitted so far.
func carryContext(ctx, emitted string) string {
	if emitted == "" {
		return ctx
	}
	if nl := strings.LastIndexByte(emitted, '\n'); nl >= 0 {
		ctx, emitted = "", emitted[nl+1:]
	}
	if emitted == "" {
		return ""
	}
	if ctx == pemContext {
		ctx = ""
	}
	c := ctx + emitted
	if len(c) > lookBehind {
		c = c[len(c)-lookBehind:]
	}
	return c
}

// openPEM reports whether a PEM private key finding runs to the end of a
// detected text of length n, i.e. the block is still open.
func openPEM(found []Finding, n int) bool {
	for _, f := range found {
		if f.Rule == "pem-private-key" && f.End >= n {
			return true
		}
	}
	return false
}
