// Package fspattern compiles gitignore-style filesystem patterns and
// materializes them, against a working directory and the host, into the
// concrete paths a sandbox denies, makes writable, restores or seals.
//
// A pattern follows gitignore(5): "*" matches within one path component,
// "?" one character, "[...]" a class ("[!...]" or "[^...]" negated), "**"
// as a whole component any number of components, "\" escapes the next
// character, a trailing "/" matches directories only, a leading "!" negates
// and the last matching pattern wins. A pattern without a slash (other than
// a trailing one) matches at any depth; one with a slash is anchored at the
// working directory. Beyond gitignore: "~" and "~/" are the home directory
// (also after "!"); an absolute pattern is a host path, made relative when
// it lies under the working directory; outside it only a literal path
// (no metacharacters) is allowed, and names that one concrete path. "."
// and "./" name the working directory itself.
//
// The package is pure Go and imports nothing of moat.
package fspattern

import (
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxSegments bounds the components of one pattern, so that its matching
// states fit one machine word.
const maxSegments = 62

// Rule is one compiled pattern. The zero value matches nothing.
type Rule struct {
	// Text is the pattern as written, before ~ expansion.
	Text string
	// Negate is true for a pattern written with a leading "!".
	Negate bool
	// DirOnly is true for a pattern written with a trailing "/".
	DirOnly bool
	// Abs is the concrete host path of a literal pattern that lies outside
	// the working directory; empty otherwise.
	Abs string
	// Self is true for a pattern that names the working directory itself
	// ("." or "./", or its absolute path).
	Self bool
	// Broad is true for ".", "./", "*", "**" and "**/*", which Heimdall
	// treats as covering the working directory itself.
	Broad bool

	segs    []segment
	literal bool // anchored, every segment literal: names one concrete path
	order   int
}

// segment is one path component of a pattern.
type segment struct {
	dstar bool   // "**"
	lit   string // literal text, when glob is nil and !dstar
	glob  []tok  // a component with metacharacters
}

type tokKind uint8

const (
	tokChar  tokKind = iota // one literal rune
	tokAny                  // ?
	tokStar                 // *
	tokClass                // [...]
)

type tok struct {
	kind   tokKind
	r      rune
	neg    bool
	ranges []rune // pairs lo, hi
}

// Options say where patterns are rooted. The zero value is invalid: Root
// is required.
type Options struct {
	// Root is the working directory: absolute and clean. Required.
	Root string
	// RootAliases are other absolute spellings of Root (such as the path
	// before symbolic links were resolved); an absolute pattern under one
	// of them is rooted too. Nil means none.
	RootAliases []string
	// Home expands "~". Empty makes a pattern using "~" an error.
	Home string
}

// PatternError is an invalid pattern. Its message reads
//
//	invalid filesystem pattern "X": what is wrong
//
// The zero value is not useful.
type PatternError struct {
	// Pattern is the pattern as written.
	Pattern string
	// Problem says what is wrong with it.
	Problem string
}

// Error returns the one-line message.
func (e *PatternError) Error() string {
	return "invalid filesystem pattern " + strconv.Quote(e.Pattern) + ": " + e.Problem
}

// Compile compiles one pattern line. Blank lines and comments are the
// fragment parser's business; Compile refuses an empty pattern.
func Compile(text string, o Options) (*Rule, error) {
	bad := func(p string) (*Rule, error) { return nil, &PatternError{Pattern: text, Problem: p} }
	if !filepath.IsAbs(o.Root) || filepath.Clean(o.Root) != o.Root {
		return bad("working directory " + strconv.Quote(o.Root) + " is not absolute and clean")
	}
	if strings.IndexByte(text, 0) >= 0 {
		return bad("contains a NUL byte")
	}
	r := &Rule{Text: text}
	p := text
	if strings.HasPrefix(p, "!") {
		r.Negate = true
		p = p[1:]
	}
	if p == "" {
		return bad("empty pattern")
	}
	// A "." or ".." component of a home or absolute path is refused as
	// it is in a relative one: cleaned away, it would let the pattern
	// name a place other than the one it seems to (~/proj/../.bashrc).
	if p == "~" || strings.HasPrefix(p, "~/") || strings.HasPrefix(p, "/") {
		for _, c := range strings.Split(strings.TrimPrefix(p, "~"), "/") {
			if c == "." || c == ".." {
				return bad("\"" + c + "\" components are not allowed in a home or absolute path")
			}
		}
	}
	// ~ expansion, also after "!".
	if p == "~" || strings.HasPrefix(p, "~/") {
		if o.Home == "" || !filepath.IsAbs(o.Home) {
			return bad("~ needs an absolute home directory")
		}
		p = filepath.Clean(o.Home) + p[1:]
	} else if strings.HasPrefix(p, "~") {
		return bad("only ~ and ~/ are expanded; write another user's home as an absolute path")
	}
	if strings.HasSuffix(p, "/") && p != "/" {
		r.DirOnly = true
		p = strings.TrimRight(p, "/")
		if p == "" || p == "." {
			p = "."
		}
	}
	anchored := false
	if strings.HasPrefix(p, "/") {
		abs := filepath.Clean(p)
		if rel, ok := under(abs, o.Root, o.RootAliases); ok {
			if rel == "" {
				r.Self, r.Broad, r.literal = true, true, true
				return r, nil
			}
			p, anchored = rel, true
		} else {
			if hasMeta(p) {
				return bad("a pattern outside the working directory must be a literal path (no *, ?, [ or \\)")
			}
			if abs == "/" {
				return bad("the root directory cannot be a filesystem pattern")
			}
			r.Abs, r.literal = abs, true
			return r, nil
		}
	}
	if p == "." || p == "./" {
		r.Self, r.Broad, r.literal = true, true, true
		return r, nil
	}
	if strings.HasPrefix(p, "./") {
		p, anchored = p[2:], true
	}
	if strings.Contains(strings.TrimRight(p, "/"), "/") {
		anchored = true
	}
	switch p {
	case "*", "**", "**/*":
		r.Broad = true
	}
	parts := strings.Split(p, "/")
	if !anchored {
		parts = append([]string{"**"}, parts...)
	}
	lit := true
	for _, c := range parts {
		switch c {
		case "":
			return bad("empty path component")
		case ".", "..":
			return bad("\"" + c + "\" components are not allowed")
		}
		if c == "**" {
			if len(r.segs) > 0 && r.segs[len(r.segs)-1].dstar {
				continue // a/**/**/b is a/**/b
			}
			r.segs = append(r.segs, segment{dstar: true})
			lit = false
			continue
		}
		s, err := compileSegment(c)
		if err != nil {
			return bad(err.Error())
		}
		// The check above sees the component as written; an escaped dot
		// (`\.\.`, `.\.`) is a literal "." or ".." only once unescaped,
		// and joined to the working directory it would climb out of it.
		if s.glob == nil && (s.lit == "." || s.lit == "..") {
			return bad(strconv.Quote(s.lit) + " components are not allowed, escaped or not")
		}
		if s.glob == nil && strings.ContainsAny(s.lit, "/\x00") {
			return bad("a component cannot hold a / or a NUL byte")
		}
		if s.glob != nil {
			lit = false
		}
		r.segs = append(r.segs, s)
	}
	if len(r.segs) == 0 {
		return bad("empty pattern")
	}
	if len(r.segs) > maxSegments {
		return bad("more than " + strconv.Itoa(maxSegments) + " components")
	}
	r.literal = lit
	return r, nil
}

// under reports whether abs is root or lies below it (or one of aliases),
// and returns the path relative to it ("" for root itself).
func under(abs, root string, aliases []string) (string, bool) {
	for _, base := range append([]string{root}, aliases...) {
		if base == "" {
			continue
		}
		if abs == base {
			return "", true
		}
		if base == "/" {
			return abs[1:], true
		}
		if strings.HasPrefix(abs, base+"/") {
			return abs[len(base)+1:], true
		}
	}
	return "", false
}

// hasMeta reports whether p has a glob metacharacter or an escape.
func hasMeta(p string) bool { return strings.ContainsAny(p, "*?[\\") }

// compileSegment compiles one component.
func compileSegment(c string) (segment, error) {
	var toks []tok
	meta := false
	rs := runes(c)
	for i := 0; i < len(rs); i++ {
		switch rs[i] {
		case '\\':
			if i+1 >= len(rs) {
				return segment{}, errors.New("trailing backslash")
			}
			i++
			toks = append(toks, tok{kind: tokChar, r: rs[i]})
		case '?':
			meta = true
			toks = append(toks, tok{kind: tokAny})
		case '*':
			meta = true
			if len(toks) > 0 && toks[len(toks)-1].kind == tokStar {
				continue // ** inside a component is *
			}
			toks = append(toks, tok{kind: tokStar})
		case '[':
			meta = true
			t, n, err := compileClass(rs[i+1:])
			if err != nil {
				return segment{}, err
			}
			toks = append(toks, t)
			i += n
		default:
			toks = append(toks, tok{kind: tokChar, r: rs[i]})
		}
	}
	if !meta {
		var b strings.Builder
		for _, t := range toks {
			writeRune(&b, t.r)
		}
		return segment{lit: b.String()}, nil
	}
	return segment{glob: toks}, nil
}

// compileClass compiles the body of a bracket expression that follows "[",
// returning the runes consumed including the closing "]".
func compileClass(rs []rune) (tok, int, error) {
	t := tok{kind: tokClass}
	i := 0
	if i < len(rs) && (rs[i] == '!' || rs[i] == '^') {
		t.neg = true
		i++
	}
	first := true
	for i < len(rs) {
		c := rs[i]
		if c == ']' && !first {
			if len(t.ranges) == 0 {
				return tok{}, 0, errors.New("empty character class")
			}
			return t, i + 1, nil
		}
		first = false
		if c == '[' && i+1 < len(rs) && rs[i+1] == ':' {
			return tok{}, 0, errors.New("POSIX character classes like [:alpha:] are not supported")
		}
		if c == '\\' {
			i++
			if i >= len(rs) {
				break
			}
			c = rs[i]
		}
		lo, hi := c, c
		if i+2 < len(rs) && rs[i+1] == '-' && rs[i+2] != ']' {
			hi = rs[i+2]
			i += 2
			if hi == '\\' {
				i++
				if i >= len(rs) {
					break
				}
				hi = rs[i]
			}
			if hi < lo {
				return tok{}, 0, errors.New("character range " + string(lo) + "-" + string(hi) + " is out of order")
			}
		}
		if lo == '/' || hi == '/' {
			return tok{}, 0, errors.New("a character class cannot match /")
		}
		t.ranges = append(t.ranges, lo, hi)
		i++
	}
	return tok{}, 0, errors.New("unterminated character class [")
}

// matchName reports whether one component name matches s.
func (s *segment) matchName(name string) bool {
	if s.dstar {
		return true
	}
	if s.glob == nil {
		return s.lit == name
	}
	return matchToks(s.glob, runes(name))
}

// runes decodes s as UTF-8, turning each byte of an invalid sequence into
// a negative value of its own, so that names that are not UTF-8 still
// match byte for byte.
func runes(s string) []rune {
	out := make([]rune, 0, len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 {
			out = append(out, -rune(s[i])-1)
			i++
			continue
		}
		out = append(out, r)
		i += n
	}
	return out
}

// writeRune undoes runes for one value.
func writeRune(b *strings.Builder, r rune) {
	if r < 0 {
		b.WriteByte(byte(-r - 1))
		return
	}
	b.WriteRune(r)
}

// matchToks is an iterative glob match with single-star backtracking.
func matchToks(toks []tok, name []rune) bool {
	ti, ni := 0, 0
	starT, starN := -1, 0
	for ni < len(name) {
		if ti < len(toks) {
			t := &toks[ti]
			switch t.kind {
			case tokStar:
				starT, starN = ti, ni
				ti++
				continue
			case tokAny:
				ti++
				ni++
				continue
			case tokChar:
				if t.r == name[ni] {
					ti++
					ni++
					continue
				}
			case tokClass:
				if t.classMatch(name[ni]) {
					ti++
					ni++
					continue
				}
			}
		}
		if starT >= 0 {
			starN++
			ni = starN
			ti = starT + 1
			continue
		}
		return false
	}
	for ti < len(toks) && toks[ti].kind == tokStar {
		ti++
	}
	return ti == len(toks)
}

func (t *tok) classMatch(r rune) bool {
	in := false
	for i := 0; i+1 < len(t.ranges); i += 2 {
		if r >= t.ranges[i] && r <= t.ranges[i+1] {
			in = true
			break
		}
	}
	return in != t.neg
}

// Literal reports whether r names one concrete path: an absolute path
// outside the working directory, the working directory itself, or an
// anchored path without metacharacters.
func (r *Rule) Literal() bool { return r.literal }

// RelPath returns the working-directory-relative path a literal rooted
// rule names ("" for the working directory itself, or for a rule that is
// not a rooted literal).
func (r *Rule) RelPath() string {
	if !r.literal || r.Abs != "" || r.Self {
		return ""
	}
	parts := make([]string, len(r.segs))
	for i, s := range r.segs {
		parts[i] = s.lit
	}
	return strings.Join(parts, "/")
}

// start returns the initial state set of a rooted rule (0 for Abs and
// Self rules, which the walk does not match).
func (r *Rule) start() uint64 {
	if r.Abs != "" || r.Self || len(r.segs) == 0 {
		return 0
	}
	return r.closure(1)
}

// closure adds the zero-component matches of "**" segments that are not
// last.
func (r *Rule) closure(m uint64) uint64 {
	n := len(r.segs)
	for i := 0; i < n-1; i++ {
		if m&(1<<i) != 0 && r.segs[i].dstar {
			m |= 1 << (i + 1)
		}
	}
	return m
}

// step consumes one component name from state set m. It returns the new
// state set and whether the path ending in name matches (before the
// directory-only check).
func (r *Rule) step(m uint64, name string) (uint64, bool) {
	n := len(r.segs)
	var out uint64
	for i := 0; i < n; i++ {
		if m&(1<<i) == 0 {
			continue
		}
		s := &r.segs[i]
		if s.dstar {
			out |= 1<<i | 1<<(i+1)
		} else if s.matchName(name) {
			out |= 1 << (i + 1)
		}
	}
	out = r.closure(out)
	return out, out&(1<<n) != 0
}

// live reports whether state set m can still match something below.
func (r *Rule) live(m uint64) bool { return m&((1<<len(r.segs))-1) != 0 }

// MatchRel reports whether r matches the slash-separated relative path rel
// (not the working directory itself), a directory when isDir.
func (r *Rule) MatchRel(rel string, isDir bool) bool {
	if r.Abs != "" || r.Self || rel == "" {
		return false
	}
	m := r.start()
	var ok bool
	for _, c := range strings.Split(rel, "/") {
		m, ok = r.step(m, c)
		if m == 0 {
			return false
		}
	}
	return ok && (isDir || !r.DirOnly)
}
