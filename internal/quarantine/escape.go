package quarantine

import (
	"strconv"
	"strings"

	"github.com/moat-sandbox/moat/internal/termsafe"
)

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

// Escape returns s written out for a terminal (internal/termsafe):
// newlines and tabs kept when lines is true (file contents), escaped
// otherwise (names).
func Escape(s string, lines bool) string { return termsafe.Escape(s, lines) }
