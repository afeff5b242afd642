package sbpl

import (
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Quote returns s as an SBPL string literal: in double quotes, with every
// backslash and double quote escaped. It refuses a string holding a control
// character or invalid UTF-8, which no constant of this package holds.
func Quote(s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("sbpl: string %q: not valid UTF-8", s)
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '\\' || r == '"':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			return "", fmt.Errorf("sbpl: string %q: control character", s)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String(), nil
}

// mustQuote quotes one of this package's constants.
func mustQuote(s string) string {
	q, err := Quote(s)
	if err != nil {
		panic(err)
	}
	return q
}

// CheckPath refuses a path the profile cannot name exactly: one that is
// not absolute and clean, holds a NUL byte, or is not valid UTF-8.
// Quotes, backslashes, parentheses, newlines and regex metacharacters are
// fine: paths travel as parameters and match as bytes.
func CheckPath(p string) error {
	switch {
	case p == "" || !filepath.IsAbs(p) || filepath.Clean(p) != p:
		return fmt.Errorf("sbpl: path %q: want an absolute, clean path", p)
	case strings.IndexByte(p, 0) >= 0:
		return fmt.Errorf("sbpl: path %q: holds a NUL byte", p)
	case !utf8.ValidString(p):
		return fmt.Errorf("sbpl: path %q: not valid UTF-8", p)
	}
	return nil
}
