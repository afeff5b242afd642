package windows

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// parseCommandLine is a reference parser written from the documented
// rules of CommandLineToArgvW and the Microsoft C runtime ("Parsing C
// command-line arguments"), to check ComposeCommandLine against:
//   - the program name runs to the first space or tab, or, when it starts
//     with a quote, to the next quote; a backslash in it is literal;
//   - arguments are separated by spaces and tabs outside quotes;
//   - 2n backslashes then a quote give n backslashes, and the quote opens
//     or closes a quoted part;
//   - 2n+1 backslashes then a quote give n backslashes and a literal
//     quote;
//   - n backslashes not followed by a quote are n backslashes;
//   - inside a quoted part, two quotes in a row give one literal quote
//     (the runtime's behaviour since 2008).
func parseCommandLine(s string) []string {
	var args []string
	i := 0
	if strings.HasPrefix(s, `"`) {
		j := strings.IndexByte(s[1:], '"')
		if j < 0 {
			return []string{s[1:]}
		}
		args = append(args, s[1:1+j])
		i = 2 + j
	} else {
		j := strings.IndexAny(s, " \t")
		if j < 0 {
			return []string{s}
		}
		args = append(args, s[:j])
		i = j
	}
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) {
			return args
		}
		var b strings.Builder
		inQuote := false
		for i < len(s) {
			c := s[i]
			if c == '\\' {
				n := 0
				for i < len(s) && s[i] == '\\' {
					n++
					i++
				}
				if i < len(s) && s[i] == '"' {
					b.WriteString(strings.Repeat(`\`, n/2))
					if n%2 == 1 {
						b.WriteByte('"')
						i++
					}
				} else {
					b.WriteString(strings.Repeat(`\`, n))
				}
				continue
			}
			if c == '"' {
				if inQuote && i+1 < len(s) && s[i+1] == '"' {
					b.WriteByte('"')
					i += 2
					continue
				}
				inQuote = !inQuote
				i++
				continue
			}
			if !inQuote && (c == ' ' || c == '\t') {
				break
			}
			b.WriteByte(c)
			i++
		}
		args = append(args, b.String())
	}
}

func TestComposeCommandLine(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{`C:\bin\prog.exe`}, `C:\bin\prog.exe`},
		{[]string{`C:\Program Files\x\prog.exe`, "a"}, `"C:\Program Files\x\prog.exe" a`},
		{[]string{"", "a"}, `"" a`},
		{[]string{"p", ""}, `p ""`},
		{[]string{"p", "a b"}, `p "a b"`},
		{[]string{"p", "a\tb"}, "p \"a\tb\""},
		{[]string{"p", `say "hi"`}, `p "say \"hi\""`},
		{[]string{"p", `"`}, `p \"`},
		{[]string{"p", `a\b`}, `p a\b`},
		{[]string{"p", `a\`}, `p a\`},
		{[]string{"p", `a b\`}, `p "a b\\"`},
		{[]string{"p", `a b\\`}, `p "a b\\\\"`},
		{[]string{"p", `a\"b`}, `p a\\\"b`},
		{[]string{"p", `C:\dir with space\`}, `p "C:\dir with space\\"`},
		{[]string{"p", `\\server\share\`}, `p \\server\share\`},
		{[]string{"p", "line\nbreak"}, "p \"line\nbreak\""},
		{[]string{`C:\dir\`, "x"}, `C:\dir\ x`},
		{[]string{`C:\a dir\`, "x"}, `"C:\a dir\" x`},
		{[]string{"p", "héllo wörld"}, `p "héllo wörld"`},
	}
	for _, c := range cases {
		got, err := ComposeCommandLine(c.args)
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		if got != c.want {
			t.Errorf("%q: %s, want %s", c.args, got, c.want)
		}
		if back := parseCommandLine(got); !reflect.DeepEqual(back, c.args) {
			t.Errorf("%q: %s parses back as %q", c.args, got, back)
		}
	}
}

func TestComposeCommandLineRefuses(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{nil, "no program name"},
		{[]string{`C:\a"b.exe`}, "quote in the program name"},
		{[]string{"p", "a\x00b"}, "NUL"},
		{[]string{"p", "a\xffb"}, "UTF-8"},
	}
	for _, c := range cases {
		_, err := ComposeCommandLine(c.args)
		if !errors.Is(err, ErrCommandLine) || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "command line: ") {
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
}

// TestReferenceParser checks the reference parser itself on the examples
// of Microsoft's documentation of the C runtime's parsing.
func TestReferenceParser(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{`p "a b c" d e`, []string{"p", "a b c", "d", "e"}},
		{`p "ab\"c" "\\" d`, []string{"p", `ab"c`, `\`, "d"}},
		{`p a\\\b d"e f"g h`, []string{"p", `a\\\b`, "de fg", "h"}},
		{`p a\\\"b c d`, []string{"p", `a\"b`, "c", "d"}},
		{`p a\\\\"b c" d e`, []string{"p", `a\\b c`, "d", "e"}},
		{`p a"b"" c d`, []string{"p", `ab" c d`}},
		{`"C:\x y\p.exe" z`, []string{`C:\x y\p.exe`, "z"}},
		{"p\t a", []string{"p", "a"}},
	}
	for _, c := range cases {
		if got := parseCommandLine(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzComposeCommandLine: what ComposeCommandLine accepts, the documented
// parser gives back unchanged.
func FuzzComposeCommandLine(f *testing.F) {
	f.Add(`C:\p.exe`, `a b\`, `"\\"`)
	f.Add("", "", "\t")
	f.Add(`C:\x y\`, `\\\"`, `a"b c`)
	f.Fuzz(func(t *testing.T, prog, a, b string) {
		args := append([]string{prog}, strings.Split(a, "\x1f")...)
		args = append(args, b)
		line, err := ComposeCommandLine(args)
		if err != nil {
			if !errors.Is(err, ErrCommandLine) {
				t.Fatalf("%q: %v", args, err)
			}
			return
		}
		if back := parseCommandLine(line); !reflect.DeepEqual(back, args) {
			t.Fatalf("%q: %s parses back as %q", args, line, back)
		}
	})
}

func TestCheckBatchArgs(t *testing.T) {
	cases := []struct {
		path string
		args []string
		ok   bool
	}{
		{`C:\x\prog.exe`, []string{"p", `a&b`, "%PATH%"}, true},
		{`C:\x\build.bat`, []string{"b", "release", `C:\out\dir`, "-v", "x"}, true},
		{`C:\x\build.CMD`, []string{"b", "a&calc"}, false},
		{`C:\x\build.bat`, []string{"b", "%PATH%"}, false},
		{`C:\x\build.bat`, []string{"b", "!x!"}, false},
		{`C:\x\build.bat`, []string{"b", `"a"`}, false},
		{`C:\x\build.bat`, []string{"b", "a b"}, false},
		{`C:\x\build.bat`, []string{"b", "a,b"}, false},
		{`C:\x\build.bat`, []string{"b", ""}, false},
		{`C:\x\build.bat. .`, []string{"b", "a|b"}, false},
		{`C:\x\build.bat`, []string{"b", "a\nb"}, false},
	}
	for _, c := range cases {
		err := CheckBatchArgs(c.path, c.args)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrCommandLine)) {
			t.Errorf("%s %q: %v, want ok=%v", c.path, c.args, err, c.ok)
		}
	}
}
