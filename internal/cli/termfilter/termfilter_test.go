package termfilter

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

func filter(mode Mode, in string, chunk int) string {
	var b bytes.Buffer
	f := New(&b, mode)
	for i := 0; i < len(in); i += chunk {
		f.Write([]byte(in[i:min(len(in), i+chunk)]))
	}
	f.Close()
	return b.String()
}

func TestFilter(t *testing.T) {
	const (
		red   = "\x1b[31m"
		reset = "\x1b[0m"
	)
	tests := []struct {
		name, in       string
		strict, clip   string // "" in clip means the input unchanged
		strictSameAsIn bool
	}{
		{"plain text", "hello\nworld\r\n", "hello\nworld\r\n", "", false},
		{"colors pass", red + "x" + reset, red + "x" + reset, "", false},
		{"cursor moves pass", "\x1b[2J\x1b[H\x1b[10;5H\x1b[?25l", "\x1b[2J\x1b[H\x1b[10;5H\x1b[?25l", "", false},
		{"charset and keypad pass", "\x1b(B\x1b=\x1b7\x1b8", "\x1b(B\x1b=\x1b7\x1b8", "", false},
		{"OSC 52 clipboard write, BEL", "a\x1b]52;c;Y3VybCBldmlsfHNo\x07b", "ab", "ab", false},
		{"OSC 52 clipboard write, ST", "a\x1b]52;c;Y3VybA==\x1b\\b", "ab", "ab", false},
		{"OSC 52 query", "a\x1b]52;c;?\x07b", "ab", "ab", false},
		{"OSC 52 in UTF-8 C1 form", "a\xc2\x9d52;c;eA==\x07b", "ab", "ab", false},
		{"OSC 52 with leading zeros", "a\x1b]0052;c;eA==\x07b", "ab", "ab", false},
		{"OSC with a number too long to read", "a\x1b]5200000000000;c;eA==\x07b", "ab", "ab", false},
		{"iTerm2 clipboard write OSC 1337 Copy", "a\x1b]1337;Copy=:eHh4\x07b", "ab", "ab", false},
		{"iTerm2 file OSC 1337 File", "a\x1b]1337;File=name=eA==:eHh4\x1b\\b", "ab", "ab", false},
		{"kitty clipboard OSC 5522", "a\x1b]5522;type=write;mime=dGV4dA==\x07b", "ab", "ab", false},
		{"kitty file transfer OSC 5113", "a\x1b]5113;ac=send\x07b", "ab", "ab", false},
		{"title OSC 0", "a\x1b]0;evil title\x07b", "ab", "", false},
		{"title OSC 2", "a\x1b]2;t\x1b\\b", "ab", "", false},
		{"color query OSC 11", "a\x1b]11;?\x07b", "ab", "", false},
		{"palette query OSC 4", "a\x1b]4;1;?\x07b", "ab", "", false},
		{"hyperlink OSC 8 passes", "\x1b]8;;http://x/\x1b\\link\x1b]8;;\x1b\\", "\x1b]8;;http://x/\x1b\\link\x1b]8;;\x1b\\", "", false},
		{"hyperlink cut by CAN, then OSC 52", "\x1b]8;;x\x18\x1b]52;c;eA==\x07", "\x1b]8;;x\x1b\\", "\x1b]8;;x\x1b\\", false},
		{"hyperlink cut by ESC, then OSC 52", "\x1b]8;;x\x1b]52;c;eA==\x07", "\x1b]8;;x\x1b\\", "\x1b]8;;x\x1b\\", false},
		{"DA1", "a\x1b[cb\x1b[0cc", "abc", "", false},
		{"DA2 and DA3", "\x1b[>c\x1b[=c", "", "", false},
		{"DSR and CPR", "\x1b[5n\x1b[6n\x1b[?6n", "", "", false},
		{"CPR with a control inside", "\x1b[6\x07n", "", "\x1b[6n", false},
		{"CSI after ESC and a control", "\x1b\x07[6n", "", "\x1b[6n", false},
		{"CSI after ESC and DEL", "\x1b\x7f[6n", "", "\x1b[6n", false},
		{"DECRQM", "\x1b[?2004$p", "", "", false},
		{"XTVERSION", "\x1b[>0q", "", "", false},
		{"window report", "\x1b[21t\x1b[14t", "", "", false},
		{"DECREQTPARM", "\x1b[x", "", "", false},
		{"kitty keyboard query", "\x1b[?u", "", "", false},
		{"DECRQSS", "a\x1bP$qm\x1b\\b", "ab", "", false},
		{"XTGETTCAP", "\x1bP+q544e\x1b\\", "", "", false},
		{"APC kitty graphics query", "\x1b_Gi=1,a=q;\x1b\\", "", "", false},
		{"DECID", "a\x1bZb", "ab", "", false},
		{"CSI in UTF-8 C1 form", "a\xc2\x9b6nb", "ab", "", false},
		{"DCS in UTF-8 C1 form", "a\xc2\x90$qm\x1b\\b", "ab", "", false},
		{"non-ASCII text passes", "naïve — ok é\xc2\xa0", "naïve — ok é\xc2\xa0", "", false},
		{"overlong CSI dropped", "\x1b[" + strings.Repeat("1;", 100) + "6n" + "x", "x", "x", false},
		{"tmux passthrough of OSC 52", "\x1bPtmux;\x1b\x1b]52;c;eA==\x07\x1b\\", "\x1b\\", "\x1bPtmux;\x1b\\\x1b\\", false},
		{"lone ESC at the end", "a\x1b", "a", "a", false},
		{"cancelled sequence", "a\x1b[6\x18nb", "anb", "anb", false},
	}
	for _, tc := range tests {
		for _, chunk := range []int{1, 2, 3, 1 << 20} {
			got := filter(Strict, tc.in, chunk)
			if got != tc.strict {
				t.Errorf("%s (strict, writes of %d): got %q, want %q", tc.name, chunk, got, tc.strict)
			}
			wantClip := tc.clip
			if wantClip == "" {
				wantClip = tc.in
			}
			if got := filter(Clipboard, tc.in, chunk); got != wantClip {
				t.Errorf("%s (clipboard, writes of %d): got %q, want %q", tc.name, chunk, got, wantClip)
			}
		}
	}
}

// forbidden finds, in output as a terminal would parse it (controls inside
// sequences run and skipped), a sequence Strict mode must have removed.
var forbidden = regexp.MustCompile(`\x1b\](?:[0-9]*[^0-9]|[0-9]*$)|\x1b[PX^_Z]|\xc2[\x80-\x9f]|\x1b\[[\x30-\x3f]*[\x20-\x2f]*[cnt]|\x1b\[[\x30-\x3f]*\$[pw]|\x1b\[>[\x30-\x3f]*q|\x1b\[\?[\x30-\x3f]*[uSm]|\x1b\[[0-9;]*x`)
var allowedOSC = regexp.MustCompile(`^\x1b\]0*(7|8|133)([^0-9]|$)`)

func strictLeak(out string) string {
	// A terminal runs C0 controls inside a sequence and stays in it.
	view := strings.Map(func(r rune) rune {
		if r < 0x20 && r != 0x1b && r != 0x18 && r != 0x1a || r == 0x7f {
			return -1
		}
		return r
	}, out)
	for _, loc := range forbidden.FindAllStringIndex(view, -1) {
		m := view[loc[0]:loc[1]]
		if strings.HasPrefix(m, "\x1b]") && allowedOSC.MatchString(view[loc[0]:]) {
			continue
		}
		return m
	}
	return ""
}

// FuzzFilter: writes cut anywhere give the same output; filtering twice
// changes nothing more; Strict output holds no clipboard write, title,
// string or query, as a terminal would parse it; Clipboard output holds no
// OSC 52.
func FuzzFilter(f *testing.F) {
	f.Add("a\x1b]52;c;eA==\x07b\x1b[6n\x1bP$qm\x1b\\", 3)
	f.Add("\x1b]8;;x\x18\x1b]52;c;eA==\x07", 1)
	f.Add("\x1b\x07[6n\xc2\x9b6n\x1b[?u", 2)
	f.Fuzz(func(t *testing.T, in string, chunk int) {
		if chunk <= 0 || chunk > len(in)+1 {
			chunk = len(in) + 1
		}
		for _, mode := range []Mode{Strict, Clipboard} {
			whole := filter(mode, in, len(in)+1)
			if cut := filter(mode, in, chunk); cut != whole {
				t.Fatalf("mode %d: writes of %d give %q, one write %q", mode, chunk, cut, whole)
			}
			if again := filter(mode, whole, len(whole)+1); again != whole {
				t.Fatalf("mode %d: not idempotent: %q then %q", mode, whole, again)
			}
			if mode == Strict {
				if leak := strictLeak(whole); leak != "" {
					t.Fatalf("strict output %q keeps %q", whole, leak)
				}
			}
			if mode == Clipboard && regexp.MustCompile(`(\x1b\]|\xc2\x9d)0*52([^0-9]|$)`).MatchString(strictView(whole)) {
				t.Fatalf("clipboard output %q keeps OSC 52", whole)
			}
		}
	})
}

func strictView(out string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 && r != 0x1b && r != 0x18 && r != 0x1a || r == 0x7f {
			return -1
		}
		return r
	}, out)
}
