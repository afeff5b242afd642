package fspattern

import (
	"strings"
	"testing"
)

func TestMatchRel(t *testing.T) {
	o := Options{Root: "/w", Home: "/h"}
	cases := []struct {
		pat   string
		path  string
		dir   bool
		match bool
	}{
		{"foo", "foo", false, true},
		{"foo", "a/b/foo", false, true},
		{"foo", "foo/bar", false, false},
		{"foo/", "foo", false, false},
		{"foo/", "foo", true, true},
		{"foo/", "a/foo", true, true},
		{"/foo", "/foo", false, false}, // not under the root: an absolute path
		{"./foo", "foo", false, true},
		{"./foo", "a/foo", false, false},
		{"a/foo", "a/foo", false, true},
		{"a/foo", "x/a/foo", false, false},
		{"*.env", "x.env", false, true},
		{"*.env", "d/x.env", false, true},
		{"*.env", "x.env.bak", false, false},
		{".env*", ".env", false, true},
		{".env*", ".env.example", false, true},
		{".env*", "sub/.env.local", false, true},
		{"**/.env*", ".env", false, true},
		{"**/.env*", "packages/api/.env.local", false, true},
		{"a/**/b", "a/b", false, true},
		{"a/**/b", "a/x/y/b", false, true},
		{"a/**/b", "a/x/y/c", false, false},
		{"a/**", "a", true, false},
		{"a/**", "a/x", false, true},
		{"a/**", "a/x/y", false, true},
		{"**", "x", false, true},
		{"**", "x/y", false, true},
		{"**/*", "x/y", false, true},
		{"*", "x/y", false, true},
		{"a?c", "abc", false, true},
		{"a?c", "ac", false, false},
		{"a[bc]d", "acd", false, true},
		{"a[!bc]d", "acd", false, false},
		{"a[^bc]d", "axd", false, true},
		{"a[a-c]d", "abd", false, true},
		{"a[a-c]d", "add", false, false},
		{`a\*b`, "a*b", false, true},
		{`a\*b`, "axb", false, false},
		{`\!x`, "!x", false, true},
		{"a**b", "axxb", false, true},
		{"a*", "a/b", false, false},
		{"d/*.txt", "d/x.txt", false, true},
		{"d/*.txt", "d/e/x.txt", false, false},
		{"/w/sub/x", "sub/x", false, true}, // absolute under the root
		{"~/x", "x", false, false},         // home is not the root
	}
	for _, c := range cases {
		r, err := Compile(c.pat, o)
		if err != nil {
			t.Errorf("Compile(%q): %v", c.pat, err)
			continue
		}
		if got := r.MatchRel(c.path, c.dir); got != c.match {
			t.Errorf("%q matching %q (dir %v) = %v, want %v", c.pat, c.path, c.dir, got, c.match)
		}
	}
}

func TestCompileForms(t *testing.T) {
	o := Options{Root: "/w", Home: "/h"}
	cases := []struct {
		pat     string
		abs     string
		self    bool
		broad   bool
		negate  bool
		literal bool
		rel     string
	}{
		{pat: ".", self: true, broad: true, literal: true},
		{pat: "./", self: true, broad: true, literal: true},
		{pat: "/w", self: true, broad: true, literal: true},
		{pat: "*", broad: true},
		{pat: "**", broad: true},
		{pat: "**/*", broad: true},
		{pat: "~/.ssh", abs: "/h/.ssh", literal: true},
		{pat: "!~/.ssh", abs: "/h/.ssh", negate: true, literal: true},
		{pat: "/etc/shadow", abs: "/etc/shadow", literal: true},
		{pat: "/w/a/b", literal: true, rel: "a/b"},
		{pat: "a/b", literal: true, rel: "a/b"},
		{pat: "b"},
		{pat: "a/*"},
	}
	for _, c := range cases {
		r, err := Compile(c.pat, o)
		if err != nil {
			t.Errorf("Compile(%q): %v", c.pat, err)
			continue
		}
		if r.Abs != c.abs || r.Self != c.self || r.Broad != c.broad || r.Negate != c.negate || r.Literal() != c.literal || r.RelPath() != c.rel {
			t.Errorf("Compile(%q) = abs %q self %v broad %v negate %v literal %v rel %q; want %+v", c.pat, r.Abs, r.Self, r.Broad, r.Negate, r.Literal(), r.RelPath(), c)
		}
	}
}

func TestCompileInvalid(t *testing.T) {
	o := Options{Root: "/w", Home: "/h"}
	cases := []struct{ pat, want string }{
		{"", "empty pattern"},
		{"!", "empty pattern"},
		{"a[", "unterminated character class"},
		{"a[]", "unterminated"},
		{"a[z-a]", "out of order"},
		{`a\`, "trailing backslash"},
		{"../x", `".." components`},
		{"a/../x", `".." components`},
		{"a//b", "empty path component"},
		{"/etc/../etc/shadow", `".." components are not allowed in a home or absolute path`},
		{"~/proj/../.bashrc", `".." components`},
		{"~/.config/tmux/../../.zlogin", `".." components`},
		{"!~/../x", `".." components`},
		{"/w/../.npmrc", `".." components`},
		{"/w/a/../b", `".." components`},
		{"~/./x", `"." components`},
		{"/w/.", `"." components`},
		{"~/..", `".." components`},
		{"/etc/*.conf", "literal path"},
		{"~bob/x", "only ~ and ~/"},
		{"x\x00y", "NUL"},
		{"[[:alpha:]]", "POSIX"},
		{"/", "root directory"},
		{strings.Repeat("a/", 70) + "b", "more than"},
	}
	for _, c := range cases {
		_, err := Compile(c.pat, o)
		if err == nil {
			t.Errorf("Compile(%q): no error", c.pat)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "invalid filesystem pattern ") || !strings.Contains(msg, c.want) {
			t.Errorf("Compile(%q) = %q, want the pattern error with %q", c.pat, msg, c.want)
		}
	}
	if _, err := Compile("~/x", Options{Root: "/w"}); err == nil {
		t.Error("~ without a home: no error")
	}
}

func TestParseFragment(t *testing.T) {
	in := "# comment\n\nsecret.txt\n  \n\\#hash\n\\!bang\ntrail   \nesc\\ \r\n!neg\r\n"
	got, err := ParseFragment([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Line{{"secret.txt", 3}, {`\#hash`, 5}, {`\!bang`, 6}, {"trail", 7}, {`esc\ `, 8}, {"!neg", 9}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("line %d: got %v, want %v", i, got[i], want[i])
		}
	}
	if _, err := ParseFragment([]byte("a\x00b")); err == nil {
		t.Error("a NUL byte: no error")
	}
	// The escaped forms compile to their literal names.
	for _, c := range []struct{ pat, name string }{{`\#hash`, "#hash"}, {`\!bang`, "!bang"}, {`esc\ `, "esc "}} {
		r, err := Compile(c.pat, Options{Root: "/w"})
		if err != nil {
			t.Fatal(err)
		}
		if !r.MatchRel(c.name, false) {
			t.Errorf("%q does not match %q", c.pat, c.name)
		}
	}
}
