package redact

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestApply covers the privacy filter's apply_spans edge cases.
func TestApply(t *testing.T) {
	f := func(s, e int, cat string) Finding { return Finding{Start: s, End: e, Category: cat} }
	for _, tc := range []struct {
		name  string
		text  string
		spans []Finding
		want  string
	}{
		{"no spans", "hello", nil, "hello"},
		{"empty input", "", []Finding{f(0, 0, "secret")}, ""},
		{"one span", "mail bob@x.io now", []Finding{f(5, 13, "private_email")}, "mail [REDACTED:private_email] now"},
		{"whole text", "abc", []Finding{f(0, 3, "secret")}, "[REDACTED:secret]"},
		{"overlap is unioned", "abcdefgh", []Finding{f(1, 4, "a"), f(3, 6, "b")}, "a[REDACTED:a]gh"},
		{"contained span", "abcdefgh", []Finding{f(1, 7, "a"), f(2, 3, "b")}, "a[REDACTED:a]h"},
		{"same start keeps the longer", "abcdefgh", []Finding{f(1, 3, "short"), f(1, 6, "long")}, "a[REDACTED:long]gh"},
		{"touching stay separate", "abcdef", []Finding{f(0, 2, "x"), f(2, 4, "y")}, "[REDACTED:x][REDACTED:y]ef"},
		{"zero-length skipped", "abc", []Finding{f(1, 1, "x")}, "abc"},
		{"reversed skipped", "abc", []Finding{f(2, 1, "x")}, "abc"},
		{"negative skipped", "abc", []Finding{f(-1, 2, "x")}, "abc"},
		{"past end skipped", "abc", []Finding{f(1, 4, "x")}, "abc"},
		{"start past end skipped", "abc", []Finding{f(5, 9, "x")}, "abc"},
		{"non-boundary start skipped", "aé b", []Finding{f(2, 4, "x")}, "aé b"},
		{"non-boundary end skipped", "aé b", []Finding{f(0, 2, "x")}, "aé b"},
		{"boundary around multibyte", "aé b", []Finding{f(1, 3, "x")}, "a[REDACTED:x] b"},
		{"out of order sorted", "0123456789", []Finding{f(7, 9, "b"), f(1, 3, "a")}, "0[REDACTED:a]3456[REDACTED:b]9"},
		{"invalid does not block valid", "abcdef", []Finding{f(0, 99, "x"), f(2, 3, "y")}, "ab[REDACTED:y]def"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]Finding(nil), tc.spans...)
			if got := Apply(tc.text, tc.spans); got != tc.want {
				t.Fatalf("Apply = %q, want %q", got, tc.want)
			}
			for i := range in {
				if in[i] != tc.spans[i] {
					t.Fatal("Apply modified its spans")
				}
			}
		})
	}
}

// FuzzApply: Apply never panics; its output is valid UTF-8 when the input
// is; every byte outside the normalized spans survives in order; a
// normalized span's text never survives where it was.
func FuzzApply(f *testing.F) {
	f.Add("hello world", 0, 5, 3, 8, 20, 2)
	f.Add("aé🙂b", 1, 3, 2, 6, 0, 0)
	f.Add("", 0, 0, 0, 0, 0, 0)
	f.Fuzz(func(t *testing.T, text string, a, b, c, d, e, g int) {
		spans := []Finding{{Start: a, End: b, Category: "x"}, {Start: c, End: d, Category: "y"}, {Start: e, End: g, Category: "z"}}
		got := Apply(text, spans)
		norm := Normalize(text, spans)
		var want strings.Builder
		cursor := 0
		for i, s := range norm {
			if s.Start < cursor || s.End <= s.Start || s.End > len(text) {
				t.Fatalf("normalized span %d %+v is not sorted, disjoint and in range", i, s)
			}
			if !boundary(text, s.Start) || !boundary(text, s.End) ||
				utf8.ValidString(text) && !utf8.RuneStart(text[s.Start]) {
				t.Fatalf("normalized span %+v not on a character boundary", s)
			}
			want.WriteString(text[cursor:s.Start])
			want.WriteString(Marker(s.Category))
			cursor = s.End
		}
		want.WriteString(text[cursor:])
		if got != want.String() {
			t.Fatalf("Apply = %q, want %q", got, want.String())
		}
		if utf8.ValidString(text) && !utf8.ValidString(got) {
			t.Fatalf("Apply made invalid UTF-8: %q", got)
		}
	})
}
