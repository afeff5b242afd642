package redact

import (
	"regexp"
	"regexp/syntax"
	"sync"
	"unicode/utf8"
)

// lazyRegexp is a regular expression compiled on its first use, not when
// the package is initialised: every program that links moat runs this
// package's init, and moat's sandbox helper is such a program, so
// compiling the rules eagerly cost every sandbox's start about a
// millisecond of CPU for patterns it never uses.
type lazyRegexp struct {
	src    string
	once   sync.Once
	re     *regexp.Regexp
	maxLen int // the longest match in bytes; -1 when unbounded
}

// lazyRegexps lists every pattern made by anchored, so that a test can
// compile them all: a pattern that does not compile fails on first use,
// not when the package loads.
var lazyRegexps []*lazyRegexp

func (l *lazyRegexp) get() *regexp.Regexp {
	l.once.Do(func() {
		l.re = regexp.MustCompile(l.src)
		l.maxLen = -1
		if p, err := syntax.Parse(l.src, syntax.Perl); err == nil {
			l.maxLen = maxMatchLen(p.Simplify())
		}
	})
	return l.re
}

// window returns how much of text from pos an anchored match of l can
// need: its longest match plus one byte (so that "$" does not match where
// the text goes on), at most limit. Go's backtracking matcher clears a
// bitmap as large as its input on every call, so a tight window is what
// keeps a run of candidates ("awsawsaws...") from costing each the limit.
func (l *lazyRegexp) window(text string, pos, limit int) string {
	l.get()
	if l.maxLen >= 0 && l.maxLen+1 < limit {
		limit = l.maxLen + 1
	}
	return text[pos:min(len(text), pos+limit)]
}

// maxMatchLen returns the most bytes re can match, or -1 when unbounded.
func maxMatchLen(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return 0
	case syntax.OpLiteral:
		n := 0
		for _, r := range re.Rune {
			n += utf8.RuneLen(r)
			if re.Flags&syntax.FoldCase != 0 {
				n += 3 // a folded rune may encode longer (the Kelvin sign)
			}
		}
		return n
	case syntax.OpCharClass, syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		return utf8.UTFMax
	case syntax.OpCapture:
		return maxMatchLen(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		return -1
	case syntax.OpQuest:
		return maxMatchLen(re.Sub[0])
	case syntax.OpRepeat:
		n := maxMatchLen(re.Sub[0])
		if re.Max < 0 || n < 0 {
			return -1
		}
		return n * re.Max
	case syntax.OpConcat:
		total := 0
		for _, s := range re.Sub {
			n := maxMatchLen(s)
			if n < 0 {
				return -1
			}
			total += n
		}
		return total
	case syntax.OpAlternate:
		most := 0
		for _, s := range re.Sub {
			n := maxMatchLen(s)
			if n < 0 {
				return -1
			}
			most = max(most, n)
		}
		return most
	}
	return -1
}

// FindStringIndex is [regexp.Regexp.FindStringIndex].
func (l *lazyRegexp) FindStringIndex(s string) []int { return l.get().FindStringIndex(s) }

// FindStringSubmatchIndex is [regexp.Regexp.FindStringSubmatchIndex].
func (l *lazyRegexp) FindStringSubmatchIndex(s string) []int {
	return l.get().FindStringSubmatchIndex(s)
}
