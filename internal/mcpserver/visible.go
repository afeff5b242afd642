package mcpserver

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Text content and progress messages are read by people and models, so no
// character in them may act unseen: control characters (ESC, BEL), C1
// controls, bidirectional overrides and zero-width characters are written
// out as escapes. The structured content keeps the sandbox's bytes as they
// were (JSON-encoded).

// visible reports whether r may appear raw in text content.
func visible(r rune) bool { return r != utf8.RuneError && unicode.IsPrint(r) }

// visibleJSON is JSON text js with every rune that is not visible written
// as a \u escape (a surrogate pair past the BMP): the same JSON value,
// nothing raw. Outside strings JSON is ASCII, so only strings change.
func visibleJSON(js []byte) string {
	if clean(string(js), false) {
		return string(js)
	}
	var b strings.Builder
	for s := string(js); s != ""; {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case visible(r):
			b.WriteString(s[:n])
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\ufffd`) // json.Marshal leaves none; never raw
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		s = s[n:]
	}
	return b.String()
}

// visibleLines is moat's text with any rune that is not visible escaped as
// Go does (\x1b, \u202e), newlines kept: moat's words quote sandbox text
// already; this holds even where one did not.
func visibleLines(s string) string { return escapeText(s, true) }

// oneLine is text with every rune that is not visible escaped, newlines
// included: a message that must stay on its line.
func oneLine(s string) string { return escapeText(s, false) }

func escapeText(s string, lines bool) string {
	if clean(s, lines) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case lines && r == '\n', visible(r):
			b.WriteString(s[i : i+n])
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		default:
			q := strconv.QuoteRuneToASCII(r) // '\n', '\x1b', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		}
		i += n
	}
	return b.String()
}

// clean reports whether every rune of s is visible (or, with lines, a
// newline).
func clean(s string, lines bool) bool {
	for _, r := range s {
		if !visible(r) && !(lines && r == '\n') {
			return false
		}
	}
	return true
}

// quoteData is sandbox output as a Go-quoted string: every control, C1,
// bidirectional and zero-width character escaped, a byte that is not
// UTF-8 as \xNN.
func quoteData(b []byte) string { return strconv.Quote(string(b)) }
