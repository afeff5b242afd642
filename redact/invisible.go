package redact

import (
	"io"
	"unicode/utf8"
)

// SeeThrough returns a Detector that also finds what d finds in the text
// as a terminal or a reader shows it: with escape sequences (CSI such as
// "\x1b[0m", OSC, DCS and other ESC sequences), control characters other
// than newline and tab, invisible characters (zero-width space, joiners,
// soft hyphen, byte order mark) left out, and a backspace taking back the
// character before it. A finding there is mapped back onto the text, so
// it covers the escapes inside it: "AKIA\x1b[0mIOSFODNN7EXAMPLE" is
// redacted whole. The findings of d on the text itself are kept too. Text
// without any such byte costs one scan more than d alone. A nil d panics
// when used.
func SeeThrough(d Detector) Detector {
	return seeThroughDetector{d}
}

// seeThroughDetector is d seen through escapes (SeeThrough). It keeps d's
// Close, so an engine that holds resources (the model's session) is still
// closed through it, and Unwrap gives d back.
type seeThroughDetector struct{ d Detector }

// Detect finds d's findings in text and in what text shows.
func (s seeThroughDetector) Detect(text string) ([]Finding, error) {
	return seeThrough(text, s.d.Detect)
}

// Close closes d when it is an io.Closer.
func (s seeThroughDetector) Close() error {
	if c, ok := s.d.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Unwrap returns the detector SeeThrough was given.
func (s seeThroughDetector) Unwrap() Detector { return s.d }

func seeThrough(text string, detect func(string) ([]Finding, error)) ([]Finding, error) {
	out, err := detect(text)
	if err != nil {
		return nil, err
	}
	view, idx := visibleView(text)
	if idx == nil {
		return out, nil
	}
	more, err := detect(view)
	if err != nil {
		return nil, err
	}
	for _, f := range more {
		if f.Start < 0 || f.End > len(view) || f.End <= f.Start {
			continue
		}
		f.Start, f.End = idx[f.Start], idx[f.End-1]+1
		out = append(out, f)
	}
	return Widen(text, out), nil
}

// visibleView returns text as it shows (see [SeeThrough]) and, for each of
// its bytes, the offset of that byte in text; idx is nil when nothing is
// hidden, and view is then text.
func visibleView(text string) (view string, idx []int) {
	if !hasHidden(text) {
		return text, nil
	}
	b := make([]byte, 0, len(text))
	idx = make([]int, 0, len(text))
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == 0x1b:
			i += escapeLen(text, i)
			continue
		case c == '\b':
			// A backspace takes back the last shown character, all its
			// bytes, but not a line break.
			if n := len(b); n > 0 && b[n-1] != '\n' {
				_, size := utf8.DecodeLastRune(b)
				b, idx = b[:n-size], idx[:n-size]
			}
			i++
			continue
		case c < 0x20 && c != '\n' && c != '\t' || c == 0x7f:
			i++
			continue
		case c >= 0x80:
			r, size := utf8.DecodeRuneInString(text[i:])
			if invisibleRune(r) || r >= 0x80 && r < 0xa0 {
				i += size
				continue
			}
			for k := range size {
				b = append(b, text[i+k])
				idx = append(idx, i+k)
			}
			i += size
			continue
		}
		b = append(b, c)
		idx = append(idx, i)
		i++
	}
	return string(b), idx
}

// hasHidden reports whether text has a byte visibleView would drop: a
// control character other than newline and tab, or a character outside
// ASCII (which may be invisible).
func hasHidden(text string) bool {
	for i := 0; i < len(text); i++ {
		if c := text[i]; c >= 0x80 {
			return hasInvisibleRune(text[i:])
		} else if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			return true
		}
	}
	return false
}

// hasInvisibleRune reports whether s holds a hidden control character or
// an invisible or C1 character.
func hasInvisibleRune(s string) bool {
	for _, r := range s {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0 || invisibleRune(r) {
			return true
		}
	}
	return false
}

// invisibleRune reports a character that shows as nothing: zero-width
// space and joiners, word joiner and invisible operators, soft hyphen,
// byte order mark, bidirectional marks and controls.
func invisibleRune(r rune) bool {
	switch {
	case r == 0xad, r == 0x34f, r == 0x61c, r == 0x180e, r == 0xfeff:
		return true
	case r >= 0x200b && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2060 && r <= 0x206f:
		return true
	}
	return false
}

// escapeLen returns the length of the escape sequence at text[i] (an ESC):
// CSI (ESC [ parameters, intermediates, final byte), OSC, DCS, SOS, PM and
// APC strings (up to BEL or ESC \, or the end of the line), or ESC and one
// following byte. An unfinished sequence runs to the end of the text or
// line; it never swallows a newline.
func escapeLen(text string, i int) int {
	j := i + 1
	if j >= len(text) {
		return 1
	}
	switch text[j] {
	case '[':
		j++
		for j < len(text) && text[j] >= 0x20 && text[j] <= 0x3f {
			j++
		}
		if j < len(text) && text[j] >= 0x40 && text[j] <= 0x7e {
			j++
		}
		return j - i
	case ']', 'P', 'X', '^', '_':
		j++
		for j < len(text) && text[j] != '\n' {
			if text[j] == 0x07 {
				return j + 1 - i
			}
			if text[j] == 0x1b && j+1 < len(text) && text[j+1] == '\\' {
				return j + 2 - i
			}
			j++
		}
		return j - i
	case '\n':
		return 1
	}
	if c := text[j]; c >= 0x20 && c <= 0x2f { // ESC, intermediates, final
		for j < len(text) && text[j] >= 0x20 && text[j] <= 0x2f {
			j++
		}
		if j < len(text) && text[j] != '\n' {
			j++
		}
		return j - i
	}
	return 2
}
