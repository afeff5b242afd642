package fspattern

import (
	"path"
	"strings"
	"testing"
	"unicode/utf8"
)

// refMatch is a simple reference for a relative gitignore pattern: it
// splits into components and recurses, using path.Match for one component.
// ok is false where the reference has no opinion (a form path.Match reads
// differently).
func refMatch(pat, rel string, isDir bool) (match, ok bool) {
	if len(rel) > 200 || len(pat) > 200 {
		return false, false // path.Match backtracks polynomially in the stars
	}
	if !utf8.ValidString(pat) || !utf8.ValidString(rel) {
		return false, false // path.Match reads invalid UTF-8 its own way
	}
	p := strings.TrimPrefix(pat, "!")
	dirOnly := false
	if strings.HasSuffix(p, "/") {
		dirOnly = true
		p = strings.TrimRight(p, "/")
	}
	anchored := false
	if strings.HasPrefix(p, "./") {
		p, anchored = p[2:], true
	}
	if strings.Contains(p, "/") {
		anchored = true
	}
	segs := strings.Split(p, "/")
	if !anchored {
		segs = append([]string{"**"}, segs...)
	}
	for i, s := range segs {
		if strings.Count(s, "*") > 3 || len(s) > 64 || strings.Count(s, "[") > 1 {
			return false, false // path.Match backtracks exponentially
		}
		if strings.Contains(s, "[]") || strings.Contains(s, "[!]") || strings.Contains(s, "[^]") || strings.Contains(s, "[:") {
			return false, false
		}
		// path.Match negates with ^ only.
		s = strings.ReplaceAll(s, "[!", "[^")
		if _, err := path.Match(s, ""); err != nil {
			return false, false
		}
		segs[i] = s
	}
	comps := strings.Split(rel, "/")
	memo := map[[2]int]bool{}
	var rec func(i, j int) bool // segs[i:] against comps[j:]
	rec = func(i, j int) bool {
		k := [2]int{i, j}
		if v, ok := memo[k]; ok {
			return v
		}
		var m bool
		switch {
		case i == len(segs):
			m = j == len(comps)
		case segs[i] == "**" && i == len(segs)-1:
			m = len(comps)-j >= 1
		case segs[i] == "**":
			m = rec(i+1, j) || (j < len(comps) && rec(i, j+1))
		case j == len(comps):
			m = false
		default:
			ok, _ := path.Match(segs[i], comps[j])
			m = ok && rec(i+1, j+1)
		}
		memo[k] = m
		return m
	}
	return rec(0, 0) && (isDir || !dirOnly), true
}

func FuzzCompile(f *testing.F) {
	seeds := [][2]string{
		{"*.env", "a/b.env"}, {"**/.env*", "x/.env.local"}, {"a/**/b", "a/x/b"}, {"a/**", "a/b/c"},
		{"[a-c]x", "bx"}, {"[!a]x", "ax"}, {`\*x`, "*x"}, {"foo/", "foo"}, {"./a/b", "a/b"},
		{"a?c", "abc"}, {"**", "q"}, {"!x", "x"}, {"a**b", "axb"}, {"~/x", "x"}, {"/w/a", "a"},
		{"~/a/../b", "b"}, {"/w/./a", "a"}, {"!/etc/../x", "x"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	o := Options{Root: "/w", Home: "/h"}
	f.Fuzz(func(t *testing.T, pat, rel string) {
		r, err := Compile(pat, o)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "invalid filesystem pattern ") {
				t.Fatalf("Compile(%q): odd error %q", pat, err)
			}
			return
		}
		if body := strings.TrimPrefix(pat, "!"); strings.HasPrefix(body, "/") || strings.HasPrefix(body, "~/") {
			for _, c := range strings.Split(body, "/") {
				if c == "." || c == ".." {
					t.Fatalf("Compile(%q) accepted a %q component", pat, c)
				}
			}
		}
		if rel == "" || strings.HasPrefix(rel, "/") || strings.HasSuffix(rel, "/") || strings.Contains(rel, "//") || strings.ContainsRune(rel, 0) {
			return
		}
		for _, isDir := range []bool{false, true} {
			got := r.MatchRel(rel, isDir)
			if r.Abs != "" || r.Self || strings.HasPrefix(strings.TrimPrefix(pat, "!"), "/") || strings.HasPrefix(strings.TrimPrefix(pat, "!"), "~") || strings.Contains(pat, "\\") {
				continue // no reference for these forms
			}
			want, ok := refMatch(pat, rel, isDir)
			if ok && got != want {
				t.Fatalf("%q matching %q (dir %v) = %v, reference says %v", pat, rel, isDir, got, want)
			}
		}
	})
}

func FuzzParseFragment(f *testing.F) {
	f.Add([]byte("# c\n\nsecret.txt\n!keep\n\\#x\ntrail  \n"))
	f.Add([]byte("a\r\nb\\ \n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines, err := ParseFragment(data)
		if err != nil {
			return
		}
		prev := 0
		for _, l := range lines {
			if l.Text == "" || strings.HasPrefix(l.Text, "#") || strings.ContainsAny(l.Text, "\n") || l.N <= prev {
				t.Fatalf("bad line %+v", l)
			}
			prev = l.N
			_, _ = Compile(l.Text, Options{Root: "/w", Home: "/h"})
		}
	})
}
