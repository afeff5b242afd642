package redact

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

// writeChunks feeds text to a Writer in pieces whose sizes next returns,
// closes it and returns what came out.
func writeChunks(t testing.TB, d Detector, text string, next func() int, opts ...WriterOption) string {
	t.Helper()
	var out bytes.Buffer
	w := NewWriter(&out, d, opts...)
	for off := 0; off < len(text); {
		n := min(max(next(), 1), len(text)-off)
		if k, err := w.Write([]byte(text[off : off+n])); err != nil || k != n {
			t.Fatalf("Write = %d, %v; want %d, nil", k, err, n)
		}
		off += n
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return out.String()
}

// TestWriterMatchesApply: whatever the write boundaries, the stream's
// output is what Apply makes of the whole text at once.
func TestWriterMatchesApply(t *testing.T) {
	text, _ := loadCorpus(t)
	r := NewRules()
	found, _ := r.Detect(text)
	want := Apply(text, found)
	rng := rand.New(rand.NewPCG(15, 15))
	for _, tc := range []struct {
		name string
		next func() int
	}{
		{"bytes", func() int { return 1 }},
		{"small", func() int { return 1 + rng.IntN(16) }},
		{"medium", func() int { return 1 + rng.IntN(700) }},
		{"pipe", func() int { return 32 << 10 }},
		{"whole", func() int { return len(text) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := writeChunks(t, r, text, tc.next); got != want {
				i := 0
				for i < len(got) && i < len(want) && got[i] == want[i] {
					i++
				}
				t.Fatalf("stream output differs from Apply at byte %d:\n got %q\nwant %q", i, got[i:min(len(got), i+120)], want[i:min(len(want), i+120)])
			}
		})
	}
}

// splitSecrets are secrets each rule family finds, to be cut at every
// byte between two writes.
var splitSecrets = []string{
	"ghp_16C7e42F292c6912E7710c838347Ae178B4a",
	"AKIAIOSFODNN7EXAMPLE",
	"alice.smith@example.com",
	"4111 1111 1111 1111",
	"DE89 3704 0044 0532 0130 00",
	"+44 20 7946 0958",
	"2001:db8::8a2e:370:7334",
	"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
	"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACDh9l4vQ1Hh1f7l0xq3JxYxQj7YQ9h1Hh1f7l0xq3JxYw==\n-----END OPENSSH PRIVATE KEY-----",
}

// TestWriterSplitSecret cuts each secret at every byte and checks that
// neither the secret nor any long piece of it comes out.
func TestWriterSplitSecret(t *testing.T) {
	r := NewRules()
	for _, secret := range splitSecrets {
		text := "before " + secret + " after\nnext line\n"
		for cut := 1; cut < len(text); cut++ {
			var out bytes.Buffer
			w := NewWriter(&out, r)
			w.Write([]byte(text[:cut]))
			w.Write([]byte(text[cut:]))
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			got := out.String()
			if strings.Contains(got, secret) || !strings.Contains(got, "[REDACTED:") {
				t.Fatalf("secret %q cut at %d: output %q", secret, cut, got)
			}
			if f, _ := r.Detect(text); got != Apply(text, f) {
				t.Fatalf("secret %q cut at %d: output %q, want %q", secret, cut, got, Apply(text, f))
			}
		}
	}
}

// TestWriterHoldsOpenPEM: nothing of a PEM block comes out before its END
// line, and the lines before it are not held back.
func TestWriterHoldsOpenPEM(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out, NewRules())
	w.Write([]byte("line one\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1234\n"))
	if got := out.String(); got != "line one\n" {
		t.Fatalf("before END: %q, want only the first line", got)
	}
	w.Write([]byte("abcdEFGH5678+/==\n-----END RSA PRIVATE KEY-----\ntail"))
	if got := out.String(); got != "line one\n[REDACTED:secret]\n" {
		t.Fatalf("after END: %q", got)
	}
	w.Close()
	if got := out.String(); got != "line one\n[REDACTED:secret]\ntail" {
		t.Fatalf("after Close: %q", got)
	}
}

// TestWriterUnterminatedPEMAtClose: a block still open at Close is
// redacted to the end.
func TestWriterUnterminatedPEMAtClose(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out, NewRules())
	w.Write([]byte("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n"))
	w.Close()
	if got := out.String(); got != "[REDACTED:secret]" {
		t.Fatalf("got %q", got)
	}
}

// TestWriterLongLine: a line longer than the line limit is cut at a word
// break, never inside a finding.
func TestWriterLongLine(t *testing.T) {
	secret := "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
	for _, pad := range []int{200, 230, 250, 300, 600} {
		text := strings.Repeat("word ", pad/5) + secret + " " + strings.Repeat("more words ", 80)
		got := writeChunks(t, NewRules(), text, func() int { return 7 }, WithMaxLine(256))
		if strings.Contains(got, secret) || strings.Count(got, "[REDACTED:secret]") != 1 {
			t.Fatalf("pad %d: %q", pad, got)
		}
	}
}

// TestWriterMaxHold: a finding that stays open past the hold limit is
// emitted redacted instead of growing the buffer without bound.
func TestWriterMaxHold(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out, NewRules(), WithMaxLine(256), WithMaxHold(4096))
	w.Write([]byte("-----BEGIN PRIVATE KEY-----\n"))
	line := []byte(strings.Repeat("A", 64) + "\n")
	for range 200 {
		w.Write(line)
	}
	if len(w.buf) > 2*4096+len(line) {
		t.Fatalf("holding %d bytes, limit 4096", len(w.buf))
	}
	if strings.Contains(out.String(), "BEGIN") || !strings.Contains(out.String(), "[REDACTED:secret]") {
		t.Fatalf("forced flush wrote %q", out.String()[:min(out.Len(), 200)])
	}
}

var errBoom = errors.New("boom")

// TestWriterDetectorError: after a detector failure nothing more is
// written, not even what was held, and every call reports the failure.
func TestWriterDetectorError(t *testing.T) {
	calls := 0
	d := DetectorFunc(func(text string) ([]Finding, error) {
		calls++
		if calls > 1 {
			return nil, errBoom
		}
		return NewRules().Detect(text)
	})
	var out bytes.Buffer
	w := NewWriter(&out, d)
	if _, err := w.Write([]byte("ok line\npartial")); err != nil {
		t.Fatal(err)
	}
	_, err := w.Write([]byte(" raw-secret-tail\nmore\n"))
	if !errors.Is(err, ErrWriterFailed) || !errors.Is(err, errBoom) {
		t.Fatalf("Write error %v; want ErrWriterFailed wrapping boom", err)
	}
	if _, err := w.Write([]byte("later\n")); !errors.Is(err, ErrWriterFailed) {
		t.Fatalf("later Write error %v", err)
	}
	if err := w.Close(); !errors.Is(err, ErrWriterFailed) {
		t.Fatalf("Close error %v", err)
	}
	if got := out.String(); got != "ok line\n" {
		t.Fatalf("output %q; want only what was redacted before the failure", got)
	}
}

// TestWriterCloseTwice: writes after Close fail; Close itself is safe to
// call again and reports the writer closed.
func TestWriterCloseTwice(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out, NewRules())
	w.Write([]byte("x"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("y")); err == nil {
		t.Fatal("Write after Close succeeded")
	}
	if out.String() != "x" {
		t.Fatalf("output %q", out.String())
	}
}

// FuzzWriter plants a secret in random text and writes it in random
// pieces. The output must equal Apply on the whole text (the writer's
// invariant for a line-local detector within its limits), and the
// planted secret must not survive.
func FuzzWriter(f *testing.F) {
	for i := range splitSecrets {
		f.Add("some text\nkey: value ", uint8(i), uint64(i*7919+1))
	}
	f.Add("ß€🙂\n\n\r\n", uint8(3), uint64(42))
	f.Add("-----BEGIN PRIVATE KEY-----\nAAAA", uint8(8), uint64(9))
	f.Fuzz(func(t *testing.T, noise string, which uint8, seed uint64) {
		secret := splitSecrets[int(which)%len(splitSecrets)]
		rng := rand.New(rand.NewPCG(seed, seed>>1))
		cut := rng.IntN(len(noise) + 1)
		text := noise[:cut] + "\n" + secret + "\n" + noise[cut:]
		r := NewRules()
		found, _ := r.Detect(text)
		want := Apply(text, found)
		got := writeChunks(t, r, text, func() int { return 1 + rng.IntN(64) })
		if got != want {
			t.Fatalf("stream %q\n  != Apply %q", got, want)
		}
		if !strings.Contains(noise, secret) && strings.Contains(got, secret) {
			t.Fatalf("planted secret survived: %q", got)
		}
		// With a tiny line limit the cut may fall inside long lines; the
		// planted secret, on its own line, must still not come out.
		small := writeChunks(t, r, text, func() int { return 1 + rng.IntN(300) }, WithMaxLine(256))
		if len(secret) < 200 && !strings.Contains(noise, secret) && strings.Contains(small, secret) {
			t.Fatalf("planted secret survived a small line limit: %q", small)
		}
	})
}
