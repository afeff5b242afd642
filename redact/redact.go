package redact

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Categories every engine uses. The first eight are the categories of the
// openai/privacy-filter model; the rules engine adds [CategoryIPAddress].
const (
	CategoryAccountNumber  = "account_number"
	CategoryPrivateAddress = "private_address"
	CategoryPrivateDate    = "private_date"
	CategoryPrivateEmail   = "private_email"
	CategoryPrivatePerson  = "private_person"
	CategoryPrivatePhone   = "private_phone"
	CategoryPrivateURL     = "private_url"
	CategorySecret         = "secret"
	// CategoryIPAddress is an IPv4 or IPv6 address (rules engine only).
	CategoryIPAddress = "ip_address"
)

// Finding is one detected span of a text.
//
// The zero value is an empty span at offset 0 with no category, which
// [Apply] skips.
type Finding struct {
	// Start and End are byte offsets into the text, End exclusive.
	Start, End int
	// Category is what was found, one of the Category constants (an engine
	// may add its own). Apply writes it into the marker.
	Category string
	// Rule names the rule that matched, such as "github-token"; it is ""
	// for engines without named rules. It is informational only.
	Rule string
}

// Detector finds the spans of a text to redact. Detect must be safe to call
// from one goroutine at a time; [Rules] is safe for concurrent use.
type Detector interface {
	// Detect returns the findings of text in any order; they may overlap.
	// An error means the text could not be examined, and callers must not
	// pass it on unredacted.
	Detect(text string) ([]Finding, error)
}

// DetectorFunc adapts a function to [Detector]. A nil DetectorFunc panics
// when called.
type DetectorFunc func(text string) ([]Finding, error)

// Detect calls f(text).
func (f DetectorFunc) Detect(text string) ([]Finding, error) { return f(text) }

// Marker returns the text that replaces a span of category: [REDACTED:category].
func Marker(category string) string { return "[REDACTED:" + category + "]" }

// Apply returns text with each span replaced by [Marker] of its category.
// It follows the privacy filter's apply_spans: spans are sorted by start
// (then end); a span that is empty, negative, reaches past the end of text,
// or whose start or end falls inside a well-formed multi-byte character is
// skipped (a redactor widens first: see [Widen]);
// overlapping spans are unioned into one marker carrying the category of
// the earliest-starting span. Spans that merely touch stay separate. The
// spans slice is not modified.
func Apply(text string, spans []Finding) string {
	return applyNormalized(text, Normalize(text, spans))
}

// applyNormalized is Apply for spans Normalize returned.
func applyNormalized(text string, valid []Finding) string {
	if len(valid) == 0 {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	cursor := 0
	for _, s := range valid {
		b.WriteString(text[cursor:s.Start])
		b.WriteString(Marker(s.Category))
		cursor = s.End
	}
	b.WriteString(text[cursor:])
	return b.String()
}

// Normalize returns the spans that [Apply] would replace in text, sorted,
// with invalid spans dropped and overlapping spans unioned. The result is
// a new slice; Rule is kept from the earliest span of each union.
func Normalize(text string, spans []Finding) []Finding {
	valid := make([]Finding, 0, len(spans))
	for _, s := range spans {
		if s.Start < 0 || s.End <= s.Start || s.End > len(text) {
			continue
		}
		if !boundary(text, s.Start) || !boundary(text, s.End) {
			continue
		}
		valid = append(valid, s)
	}
	slices.SortStableFunc(valid, func(a, b Finding) int {
		if a.Start != b.Start {
			return cmp.Compare(a.Start, b.Start)
		}
		return cmp.Compare(b.End, a.End)
	})
	out := valid[:0]
	for _, s := range valid {
		if n := len(out); n > 0 && s.Start < out[n-1].End {
			if s.End > out[n-1].End {
				out[n-1].End = s.End
			}
			continue
		}
		out = append(out, s)
	}
	return out
}

// boundary reports whether i is a UTF-8 character boundary of s, as Rust's
// str::is_char_boundary for valid UTF-8: 0 and len(s) are, and so is any
// offset that does not fall inside a well-formed multi-byte character. A
// stray continuation byte or other invalid UTF-8 (which a Rust str cannot
// hold) is a character of its own, so a secret next to it is not skipped.
func boundary(s string, i int) bool {
	if i <= 0 || i >= len(s) || utf8.RuneStart(s[i]) {
		return true
	}
	for j := i - 1; j >= 0 && j >= i-3; j-- {
		if utf8.RuneStart(s[j]) {
			r, n := utf8.DecodeRuneInString(s[j:])
			return r == utf8.RuneError && n <= 1 || j+n <= i
		}
	}
	return true
}
