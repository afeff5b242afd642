package quarantine

import (
	"fmt"
	"strconv"
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

// unescapePlace reverses the state directory's escaping of a place's path
// (%XX for every byte but letters, digits, '.', '_' and '-'); ok is false
// for a name that escaping could not have made.
func unescapePlace(name string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '%':
			if i+2 >= len(name) {
				return "", false
			}
			v, err := strconv.ParseUint(name[i+1:i+3], 16, 8)
			if err != nil {
				return "", false
			}
			b.WriteByte(byte(v))
			i += 2
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-':
			b.WriteByte(c)
		default:
			return "", false
		}
	}
	p := b.String()
	return p, strings.HasPrefix(p, "/")
}
