// Package termsafe writes text that a sandbox chose (names, paths, file
// contents) so that printing it on a terminal cannot act on the terminal:
// no escape sequence, control character or bidirectional override gets
// through, and the escaped form is unambiguous.
package termsafe

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape returns s with everything that could act on a terminal written
// out: a byte that is not valid UTF-8 as \xNN, a rune that is not
// printable (control characters, ESC, C1 controls, bidirectional
// overrides) as \uNNNN, and the backslash as \\, so the escaped form is
// unambiguous. Newlines and tabs are kept when lines is true (file
// contents), escaped otherwise (names).
func Escape(s string, lines bool) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || r == '\\' || !unicode.IsPrint(r) && !(lines && (r == '\n' || r == '\t')) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		case lines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case !unicode.IsPrint(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
