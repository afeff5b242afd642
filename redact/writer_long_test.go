package redact

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// contextSecrets are secrets a rule finds only from a key word before the
// value (issue 15: a long-line cut between them emitted the value raw).
var contextSecrets = []struct{ name, key, value, tail string }{
	{"assignment", "api_key: ", "Q7f9Kd2LmX4pR8sT1vW6yZ3bN5cH0jA9eG2uI7oY", " "},
	{"json password", `"password":"`, "Zx9Qw8Er7Ty6Ui5Op4As3Df2", `" `},
	{"auth header", "Authorization: Bearer ", "Qm9iOnNlY3JldC10b2tlbi12YWx1ZS0xMjM0", " "},
	{"aws secret", "aws_secret_access_key = ", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", " "},
	{"url password", "https://deploy:", "Hn4Kp9Wq2Zr7Tx5Lm3", "@git.example.com/repo "},
	{"near key", "--api-key ", "Zx9Qw8Er7Ty6Ui5Op4Lk3Jh", " "},
}

// leaked returns the spans Apply finds in text whose raw bytes got's
// output shows although Apply's own output does not.
func leaked(t testing.TB, text, got string) []string {
	t.Helper()
	found, _ := NewRules().Detect(text)
	want := Apply(text, found)
	var out []string
	for _, s := range Normalize(text, found) {
		raw := text[s.Start:s.End]
		if len(raw) >= 8 && strings.Contains(got, raw) && !strings.Contains(want, raw) {
			out = append(out, raw)
		}
	}
	return out
}

// TestWriterLongLineContext: a line over the line limit is cut between a
// key word and its value at every offset; the value never comes out.
func TestWriterLongLineContext(t *testing.T) {
	for _, c := range contextSecrets {
		t.Run(c.name, func(t *testing.T) {
			// The report's layout at the default limits.
			text := strings.Repeat("ab ", 13333) + c.key + c.value + c.tail + strings.Repeat("cd ", 10915) + "\n"
			if got := writeChunks(t, NewRules(), text, func() int { return 32 << 10 }); strings.Contains(got, c.value) {
				t.Fatalf("default limits: value %q emitted raw", c.value)
			}
			// A small limit, the cut swept across key and value.
			for pad := 100; pad < 200; pad++ {
				text := strings.Repeat("x", pad) + " " + c.key + c.value + c.tail + strings.Repeat("more words ", 60)
				got := writeChunks(t, NewRules(), text, func() int { return 5 + pad%37 }, WithMaxLine(256))
				if strings.Contains(got, c.value) {
					t.Fatalf("pad %d: value %q emitted raw:\n%q", pad, c.value, got)
				}
			}
		})
	}
}

// TestWriterLongJSON is the report's one-line JSON of 3,000 records: none
// of its 6,000 secrets comes out.
func TestWriterLongJSON(t *testing.T) {
	var b strings.Builder
	b.WriteString("[")
	for i := range 3000 {
		fmt.Fprintf(&b, `{"id":%d,"name":"service-%d","api_key":"K%05dq7f9Kd2LmX4pR8sT1vW6","password":"P%05dZx9Qw8Er7Ty6Ui","note":"padding text here"},`, i, i, i, i)
	}
	b.WriteString("{}]\n")
	text := b.String()
	for _, chunk := range []int{4096, 32 << 10, 64 << 10} {
		got := writeChunks(t, NewRules(), text, func() int { return chunk })
		n := 0
		for i := range 3000 {
			for _, v := range []string{fmt.Sprintf("K%05dq7f9", i), fmt.Sprintf("P%05dZx9Q", i)} {
				if strings.Contains(got, v) {
					n++
				}
			}
		}
		if n > 0 {
			t.Fatalf("chunk %d: %d of 6000 secrets emitted raw", chunk, n)
		}
	}
}

// TestWriterInvalidUTF8: a stray continuation byte or cp1252 quote next
// to a secret does not cancel its redaction in the stream.
func TestWriterInvalidUTF8(t *testing.T) {
	for _, tc := range []struct{ in, secret string }{
		{"token ghp_abcdefghijklmnopqrstuvwxyzABCDEF012345\x80\n", "ghp_abcdefghijklmnopqrstuvwxyzABCDEF012345"},
		{"key \x91ghp_abcdefghijklmnopqrstuvwxyzABCDEF012345\x92\n", "ghp_abcdefghijklmnopqrstuvwxyzABCDEF012345"},
		{"api_key=\x91Q7f9Kd2LmX4pR8sT1vW6yZ3\x92\n", "Q7f9Kd2LmX4pR8sT1vW6yZ3"},
		{"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0B\n-----END PRIVATE KEY-----\x80\n", "MIIEvQIBADANBgkqhkiG9w0B"},
		{"\xe2\x82ghp_abcdefghijklmnopqrstuvwxyzABCDEF012345\xe2\n", "ghp_abcdefghijklmnopqrstuvwxyzABCDEF012345"},
	} {
		for _, chunk := range []int{1, 3, 1 << 10} {
			if got := writeChunks(t, NewRules(), tc.in, func() int { return chunk }); strings.Contains(got, tc.secret) {
				t.Errorf("%q in chunks of %d: secret emitted raw: %q", tc.in, chunk, got)
			}
		}
		found, _ := NewRules().Detect(tc.in)
		if got := Apply(tc.in, found); strings.Contains(got, tc.secret) {
			t.Errorf("Apply(%q) = %q", tc.in, got)
		}
	}
}

// TestWiden: spans off a character boundary or past the end are widened
// and clamped, never dropped, while Apply alone keeps skipping them.
func TestWiden(t *testing.T) {
	f := func(s, e int) Finding { return Finding{Start: s, End: e, Category: "x"} }
	for _, tc := range []struct {
		name, text string
		span       Finding
		want       string
	}{
		{"inside a character", "aé b", f(2, 4), "a[REDACTED:x]b"},
		{"end inside a character", "aé b", f(0, 2), "[REDACTED:x] b"},
		{"past the end", "abc", f(1, 9), "a[REDACTED:x]"},
		{"negative start", "abc", f(-2, 2), "[REDACTED:x]c"},
		{"stray continuation after", "ab\x80c", f(0, 2), "[REDACTED:x]\x80c"},
		{"reversed dropped", "abc", f(2, 1), "abc"},
	} {
		if got := Redact(tc.text, []Finding{tc.span}); got != tc.want {
			t.Errorf("%s: Redact = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestWriterPEMPastHold: a PEM block longer than the hold limit is
// redacted up to its END line, not only up to the forced flush.
func TestWriterPEMPastHold(t *testing.T) {
	var b strings.Builder
	b.WriteString("before\n-----BEGIN RSA PRIVATE KEY-----\n")
	for i := range 400 {
		fmt.Fprintf(&b, "MIIBODY%04d%s\n", i, strings.Repeat("A", 56))
	}
	b.WriteString("-----END RSA PRIVATE KEY-----\nafter the key\n")
	text := b.String()
	for _, chunk := range []int{1 << 10, 4096, 100} {
		var out bytes.Buffer
		w := NewWriter(&out, NewRules(), WithMaxLine(256), WithMaxHold(4096))
		for off := 0; off < len(text); off += chunk {
			w.Write([]byte(text[off:min(off+chunk, len(text))]))
		}
		w.Close()
		got := out.String()
		if strings.Contains(got, "MIIBODY") || strings.Contains(got, "END RSA") {
			t.Fatalf("chunk %d: PEM body past the hold limit emitted raw: %q", chunk, got[:min(len(got), 300)])
		}
		if !strings.HasPrefix(got, "before\n") || !strings.HasSuffix(got, "\nafter the key\n") {
			t.Fatalf("chunk %d: text around the key lost: %q", chunk, got)
		}
	}
}

// FuzzWriterLong writes long lines of noise with context secrets planted
// at random offsets through a writer with a small line limit: every span
// Apply finds in the whole text is redacted in the stream too.
func FuzzWriterLong(f *testing.F) {
	f.Add("ab ", uint64(1), uint16(300))
	f.Add("x", uint64(7), uint16(2000))
	f.Add("\"k\":1,", uint64(15), uint16(900))
	f.Add("é\x80 ", uint64(3), uint16(500))
	f.Fuzz(func(t *testing.T, noise string, seed uint64, n uint16) {
		if noise == "" || strings.ContainsAny(noise, "\n") {
			return
		}
		rng := rand.New(rand.NewPCG(seed, seed^0x9e37))
		var b strings.Builder
		for b.Len() < int(n)*4 {
			if rng.IntN(8) == 0 {
				c := contextSecrets[rng.IntN(len(contextSecrets))]
				b.WriteString(" " + c.key + c.value + c.tail)
			} else {
				b.WriteString(noise)
			}
		}
		text := b.String()
		got := writeChunks(t, NewRules(), text, func() int { return 1 + rng.IntN(200) }, WithMaxLine(256))
		if l := leaked(t, text, got); len(l) > 0 {
			t.Fatalf("stream emitted %d findings raw, first %q", len(l), l[0])
		}
	})
}
