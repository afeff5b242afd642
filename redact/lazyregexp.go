package redact

import (
	"regexp"
	"sync"
)

// lazyRegexp is a regular expression compiled on its first use, not when
// the package is initialised: every program that links moat runs this
// package's init, and moat's sandbox helper is such a program, so
// compiling the rules eagerly cost every sandbox's start about a
// millisecond of CPU for patterns it never uses.
type lazyRegexp struct {
	src  string
	once sync.Once
	re   *regexp.Regexp
}

// lazyRegexps lists every pattern made by anchored, so that a test can
// compile them all: a pattern that does not compile fails on first use,
// not when the package loads.
var lazyRegexps []*lazyRegexp

func (l *lazyRegexp) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.src) })
	return l.re
}

// FindStringIndex is [regexp.Regexp.FindStringIndex].
func (l *lazyRegexp) FindStringIndex(s string) []int { return l.get().FindStringIndex(s) }

// FindStringSubmatchIndex is [regexp.Regexp.FindStringSubmatchIndex].
func (l *lazyRegexp) FindStringSubmatchIndex(s string) []int {
	return l.get().FindStringSubmatchIndex(s)
}
