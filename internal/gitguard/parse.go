package gitguard

import (
	"bytes"
	"strings"
)

// ParseGitFile returns the path a ".git" file points to ("gitdir: PATH",
// written by worktrees, submodules and --separate-git-dir), as git reads
// it: the content must start with "gitdir: " and trailing CR/LF are cut.
// A "gitdir:" without the space is accepted too: reading more pointers
// than git does only makes the guard look at more directories. It reports
// false when content is not a gitdir pointer.
func ParseGitFile(content []byte) (string, bool) {
	rest, ok := bytes.CutPrefix(content, []byte("gitdir:"))
	if !ok {
		return "", false
	}
	rest = bytes.TrimLeft(rest, " \t")
	p := string(bytes.TrimRight(rest, "\r\n"))
	if p == "" || strings.ContainsRune(p, 0) {
		return "", false
	}
	return p, true
}

// ParseCommondir returns the path a commondir file names (a linked
// worktree's git directory shares config, hooks, objects and refs with
// that directory), as git reads it: the whole content, trailing CR/LF cut.
// It reports false for an empty or unusable content.
func ParseCommondir(content []byte) (string, bool) {
	p := string(bytes.TrimRight(content, "\r\n"))
	if p == "" || strings.ContainsRune(p, 0) {
		return "", false
	}
	return p, true
}

// ParseIncludes returns, in order, the values of the include.path and
// includeIf.<condition>.path keys of a git configuration file: the files
// git reads as if they were part of it. Every includeIf is listed whatever
// its condition, since a condition that is false now can become true; an
// [include "x"] section is listed too although git ignores it. The syntax
// follows git-config(1): case-insensitive section and key names, "[s
// "sub"]" and "[s.sub]" headers, a key on the header's line, quoted
// values with \" \\ \n \t \b escapes, a backslash before a newline
// continuing the value, and # or ; comments.
func ParseIncludes(content []byte) []string {
	var out []string
	p := &cfgParser{b: content}
	for {
		section, key, value, ok := p.next()
		if !ok {
			return out
		}
		if key != "path" {
			continue
		}
		name, _, _ := strings.Cut(section, ".")
		if name == "include" || name == "includeif" {
			out = append(out, value)
		}
	}
}

// cfgParser walks a git configuration file, one key at a time.
type cfgParser struct {
	b       []byte
	i       int
	section string // lower-cased name, then "." and the subsection if any
}

func (p *cfgParser) peek() (byte, bool) {
	if p.i >= len(p.b) {
		return 0, false
	}
	return p.b[p.i], true
}

func (p *cfgParser) skipLine() {
	for p.i < len(p.b) && p.b[p.i] != '\n' {
		p.i++
	}
}

// next returns the next key (lower-cased) with its section and value;
// ok is false at the end of the content. A malformed line is skipped.
func (p *cfgParser) next() (section, key, value string, ok bool) {
	for {
		c, more := p.peek()
		if !more {
			return "", "", "", false
		}
		switch {
		case c == '\n' || c == ' ' || c == '\t' || c == '\r':
			p.i++
		case c == '#' || c == ';':
			p.skipLine()
		case c == '[':
			p.i++
			if !p.header() {
				p.section = ""
				p.skipLine()
			}
		case isAlpha(c):
			k := p.key()
			v, good := p.value()
			if good {
				return p.section, k, v, true
			}
			p.skipLine()
		default:
			p.skipLine()
		}
	}
}

// header reads a section header after its '['.
func (p *cfgParser) header() bool {
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == ']':
			name := strings.ToLower(string(p.b[start:p.i]))
			p.i++
			p.section = name // [name] or the legacy [name.sub]
			return name != ""
		case c == ' ' || c == '\t':
			name := strings.ToLower(string(p.b[start:p.i]))
			for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\t') {
				p.i++
			}
			if p.i >= len(p.b) || p.b[p.i] != '"' {
				return false
			}
			p.i++
			var sub []byte
			for p.i < len(p.b) && p.b[p.i] != '"' {
				if p.b[p.i] == '\n' {
					return false
				}
				if p.b[p.i] == '\\' && p.i+1 < len(p.b) && p.b[p.i+1] != '\n' {
					p.i++
				}
				sub = append(sub, p.b[p.i])
				p.i++
			}
			if p.i+1 >= len(p.b) || p.b[p.i+1] != ']' {
				return false
			}
			p.i += 2
			p.section = name + "." + string(sub)
			return name != ""
		case isAlpha(c) || isDigit(c) || c == '-' || c == '.':
			p.i++
		default:
			return false
		}
	}
	return false
}

func (p *cfgParser) key() string {
	start := p.i
	for p.i < len(p.b) && (isAlpha(p.b[p.i]) || isDigit(p.b[p.i]) || p.b[p.i] == '-') {
		p.i++
	}
	return strings.ToLower(string(p.b[start:p.i]))
}

// value reads what follows a key: nothing (a boolean true), or "=" and a
// value up to the end of its (possibly continued) line.
func (p *cfgParser) value() (string, bool) {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\t') {
		p.i++
	}
	c, more := p.peek()
	if !more || c == '\n' || c == '\r' || c == '#' || c == ';' {
		p.skipLine()
		return "", true
	}
	if c != '=' {
		return "", false
	}
	p.i++
	var out []byte
	quoted := false
	pending := 0 // unquoted whitespace not yet known to be inside the value
	for p.i < len(p.b) {
		c := p.b[p.i]
		p.i++
		switch {
		case c == '\n':
			if quoted {
				return "", false
			}
			return string(out[:len(out)-pending]), true
		case !quoted && (c == '#' || c == ';'):
			p.skipLine()
			return string(out[:len(out)-pending]), true
		case !quoted && (c == ' ' || c == '\t' || c == '\r'):
			if len(out) > 0 {
				pending++
				out = append(out, c)
			}
			continue
		case c == '"':
			quoted = !quoted
		case c == '\\':
			if p.i >= len(p.b) {
				return "", false
			}
			e := p.b[p.i]
			p.i++
			switch e {
			case '\n':
				// continuation
			case 'n':
				out = append(out, '\n')
			case 't':
				out = append(out, '\t')
			case 'b':
				if len(out) > 0 {
					out = out[:len(out)-1]
				}
			case '\\', '"':
				out = append(out, e)
			default:
				return "", false
			}
		default:
			out = append(out, c)
		}
		pending = 0
	}
	if quoted {
		return "", false
	}
	return string(out[:len(out)-pending]), true
}

func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
