package redact

import (
	"bytes"
	"strings"
	"testing"
)

// A key cut by an escape sequence, a control character or an invisible
// character reaches no reader whole, through the rules engine, any engine
// Open returns, and the stream writer; escapes that cut no secret pass
// unchanged (the control).
func TestSeeThroughEscapes(t *testing.T) {
	const key = "AKIAIOSFODNN7EXAMPLE"
	const gh = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
	tests := []struct {
		name, in string
		leak     []string // none of these may be in the output
		want     string   // exact output when not ""
	}{
		{"control: plain key", "id " + key + " ok", []string{"AKIA"}, "id [REDACTED:secret] ok"},
		{"control: colors around no secret", "\x1b[31mred\x1b[0m text", nil, "\x1b[31mred\x1b[0m text"},
		{"ANSI reset inside", "id AKIA\x1b[0mIOSFODNN7EXAMPLE ok", []string{"AKIA", "IOSFODNN7EXAMPLE"}, "id [REDACTED:secret] ok"},
		{"color inside twice", "AKIA\x1b[1;31mIOSF\x1b[0mODNN7EXAMPLE", []string{"AKIA", "ODNN7EXAMPLE"}, ""},
		{"OSC title inside", "AKIAIOSF\x1b]0;hi\x07ODNN7EXAMPLE", []string{"AKIA", "ODNN7EXAMPLE"}, ""},
		{"OSC with ST inside", "AKIAIOSF\x1b]8;;http://x\x1b\\ODNN7EXAMPLE", []string{"AKIA", "ODNN7EXAMPLE"}, ""},
		{"charset escape inside", "AKIAIOSF\x1b(BODNN7EXAMPLE", []string{"AKIA", "ODNN7EXAMPLE"}, ""},
		{"zero-width space inside", "AKIAIOSF\u200bODNN7EXAMPLE", []string{"AKIA", "ODNN7EXAMPLE"}, ""},
		{"soft hyphen inside", "AKIAIOSF\u00adODNN7EXAMPLE", []string{"AKIA", "ODNN7EXAMPLE"}, ""},
		{"NUL inside", "AKIAIOSF\x00ODNN7EXAMPLE", []string{"AKIA", "ODNN7EXAMPLE"}, ""},
		{"carriage return inside", "AKIAIOSF\rODNN7EXAMPLE", []string{"AKIA", "ODNN7EXAMPLE"}, ""},
		{"backspace over a decoy", "AKIAIOSFX\bODNN7EXAMPLE", []string{"AKIA", "ODNN7EXAMPLE"}, ""},
		{"github token with escape", "ghp_0123456789\x1b[0mabcdefghijABCDEFGHIJ012345", []string{"ghp_", "ABCDEFGHIJ012345"}, ""},
		{"key word split from its value", "pass\x1b[0mword=hunter2hunter2", []string{"hunter2"}, ""},
		{"escape-cut github token, plain line after", gh[:10] + "\x1b[m" + gh[10:] + "\nplain\n", []string{"ghp_", gh[10:]}, ""},
	}
	opened, err := Open(EngineRules, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		for _, d := range []struct {
			name string
			run  func(string) string
		}{
			{"rules", func(s string) string { f, _ := NewRules().Detect(s); return Redact(s, f) }},
			{"opened", func(s string) string { f, _ := opened.Detect(s); return Redact(s, f) }},
			{"see-through of raw rules", func(s string) string {
				f, _ := SeeThrough(DetectorFunc(NewRules().detect)).Detect(s)
				return Redact(s, f)
			}},
			{"writer, byte by byte", func(s string) string {
				var b bytes.Buffer
				w := NewWriter(&b, NewRules())
				for i := range len(s) {
					w.Write([]byte{s[i]})
				}
				w.Close()
				return b.String()
			}},
		} {
			t.Run(tc.name+"/"+d.name, func(t *testing.T) {
				got := d.run(tc.in)
				for _, l := range tc.leak {
					if strings.Contains(got, l) {
						t.Errorf("%q leaks %q", got, l)
					}
				}
				if tc.want != "" && got != tc.want {
					t.Errorf("got %q, want %q", got, tc.want)
				}
			})
		}
	}
	// The positive control: the engine without SeeThrough lets the cut key
	// through, so the test above tests something.
	f, _ := NewRules().detect("AKIA\x1b[0mIOSFODNN7EXAMPLE")
	if got := Redact("AKIA\x1b[0mIOSFODNN7EXAMPLE", f); got != "AKIA\x1b[0mIOSFODNN7EXAMPLE" {
		t.Errorf("the raw engine redacts %q: the control no longer shows the attack", got)
	}
}

func TestVisibleView(t *testing.T) {
	tests := []struct{ in, view string }{
		{"plain", "plain"},
		{"a\x1b[0mb", "ab"},
		{"a\x1b[38;5;196mb", "ab"},
		{"a\x1b]0;title\x07b", "ab"},
		{"a\x1b]0;title\x1b\\b", "ab"},
		{"a\x1b]0;unterminated\nb", "a\nb"},
		{"a\x1bPdcs\x1b\\b", "ab"},
		{"a\x1b(Bb", "ab"},
		{"a\x1b=b", "ab"},
		{"a\x1b", "a"},
		{"a\x1b\nb", "a\nb"},
		{"ab\bc", "ac"},
		{"é\bx", "x"},
		{"\n\bx", "\nx"},
		{"a\u200bb\ufeffc", "abc"},
		{"a\u0085b", "ab"},
		{"x\r\ny", "x\ny"},
		{"tab\there", "tab\there"},
		{"naïve", "naïve"},
	}
	for _, tc := range tests {
		view, idx := visibleView(tc.in)
		if view != tc.view {
			t.Errorf("visibleView(%q) = %q, want %q", tc.in, view, tc.view)
		}
		checkView(t, tc.in, view, idx)
	}
}

func checkView(t *testing.T, text, view string, idx []int) {
	t.Helper()
	if idx == nil {
		if view != text {
			t.Fatalf("no index but view %q != text %q", view, text)
		}
		return
	}
	if len(idx) != len(view) {
		t.Fatalf("index has %d entries for %d bytes", len(idx), len(view))
	}
	for i := range idx {
		if i > 0 && idx[i] <= idx[i-1] || idx[i] >= len(text) || text[idx[i]] != view[i] {
			t.Fatalf("index %d -> %d is not the byte's place (%q in %q)", i, idx[i], view, text)
		}
	}
	if strings.IndexByte(view, 0x1b) >= 0 {
		t.Fatalf("view %q keeps an ESC", view)
	}
}

// FuzzSeeThrough: the view maps back onto the text, and redacting through
// it never panics and keeps every finding inside the text.
func FuzzSeeThrough(f *testing.F) {
	f.Add("AKIA\x1b[0mIOSFODNN7EXAMPLE")
	f.Add("a\x1b]0;t\x07b\u200b\bc\x1b")
	f.Add("password\x1b[m=\x1bPx\x1b\\secretvalue1")
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 1<<14 {
			return
		}
		view, idx := visibleView(text)
		checkView(t, text, view, idx)
		fs, err := NewRules().Detect(text)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range fs {
			if x.Start < 0 || x.End > len(text) || x.End <= x.Start {
				t.Fatalf("finding %+v outside %d bytes", x, len(text))
			}
		}
	})
}
