package cli

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

func TestPrintRefusals(t *testing.T) {
	dns := func(i int) moat.Refusal {
		name := fmt.Sprintf("n%d.example", i)
		return moat.Refusal{Kind: "dns", Subject: name, Detail: "the sandbox has no network", Allow: "--network allow-list --allow-domain " + name}
	}
	many := func(n int) []moat.Refusal {
		var rs []moat.Refusal
		for i := range n {
			rs = append(rs, dns(i))
		}
		return rs
	}
	tests := []struct {
		name      string
		refusals  []moat.Refusal
		wantLines int
		wantLast  string
		wantLimit bool // the limit's line is among those printed
	}{
		{name: "none", refusals: nil, wantLines: 0},
		{name: "one", refusals: many(1), wantLines: 1,
			wantLast: "moat: dns: n0.example: the sandbox has no network (--network allow-list --allow-domain n0.example)"},
		{name: "exactly the bound", refusals: many(maxSummaryLines), wantLines: maxSummaryLines,
			wantLast: "moat: dns: n9.example: the sandbox has no network (--network allow-list --allow-domain n9.example)"},
		{name: "over the bound", refusals: many(25), wantLines: maxSummaryLines, wantLast: "moat: ... and 16 more"},
		{name: "a count of unrecorded refusals past the bound", refusals: append(many(25), moat.Refusal{Kind: "socket", Subject: "more sockets", Detail: "96 more refused, not recorded"}),
			wantLines: maxSummaryLines, wantLast: "moat: ... and 17 more"},
		{name: "a limit", refusals: []moat.Refusal{{Kind: "limit", Subject: "timeout", Detail: "killed after 1s", Allow: "--timeout"}},
			wantLines: 1, wantLast: "moat: limit: timeout: killed after 1s (--timeout)", wantLimit: true},
		{name: "terminal controls", refusals: []moat.Refusal{{Kind: "git-control", Subject: "/w/\x1b]0;pwned\a\u202e.git/config", Detail: "restored"}},
			wantLines: 1, wantLast: `moat: git-control: /w/\u001b]0;pwned\u0007\u202e.git/config: restored`},
		{name: "newline in a subject", refusals: []moat.Refusal{{Kind: "exec", Subject: "a\nmoat: fake line"}},
			wantLines: 1, wantLast: `moat: exec: a\nmoat: fake line`},
		{name: "invalid UTF-8", refusals: []moat.Refusal{{Kind: "exec", Subject: "a\xffb"}},
			wantLines: 1, wantLast: `moat: exec: a\xffb`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			printed := printRefusals(&b, tt.refusals)
			limit := slices.Contains(printed, "limit: timeout: killed after 1s (--timeout)")
			out := b.String()
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if out == "" {
				lines = nil
			}
			if len(lines) != tt.wantLines {
				t.Fatalf("%d lines, want %d:\n%s", len(lines), tt.wantLines, out)
			}
			if limit != tt.wantLimit {
				t.Errorf("limit = %v, want %v", limit, tt.wantLimit)
			}
			if len(lines) > 0 && lines[len(lines)-1] != tt.wantLast {
				t.Errorf("last line\n %q, want\n %q", lines[len(lines)-1], tt.wantLast)
			}
			for _, r := range tt.refusals {
				if strings.HasPrefix(r.Subject, "more ") && !strings.Contains(out, "moat: "+r.String()+"\n") {
					t.Errorf("the count %q is not printed:\n%s", r.String(), out)
				}
			}
			for _, l := range lines {
				if !strings.HasPrefix(l, "moat: ") {
					t.Errorf("line %q does not start with moat: ", l)
				}
				for _, r := range l {
					if r < 0x20 || r == 0x7f || r == '\u202e' {
						t.Errorf("line %q holds control character %U", l, r)
					}
				}
			}
		})
	}
}

func FuzzPrintable(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b[2J", "a\xffb", "\u202eabc", "back\\slash", "\r\n\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := printable(s)
		for _, r := range p {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u202e' || r == '\u2066' || r == '\u2028' {
				t.Fatalf("printable(%q) = %q holds %U", s, p, r)
			}
		}
		if !strings.ContainsAny(s, "\\") && isPlain(s) && p != s {
			t.Fatalf("printable(%q) = %q changed plain text", s, p)
		}
	})
}

// isPlain reports whether s is printable ASCII.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}
