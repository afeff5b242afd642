package redact

import (
	"io"
	"strings"
	"testing"
)

// mixedText returns about n bytes of the corpus's raw text repeated: code,
// logs, prose, numbers and some secrets, the mix an agent's output has.
func mixedText(tb testing.TB, n int) string {
	text, _ := loadCorpus(tb)
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(text)
		b.WriteByte('\n')
	}
	return b.String()[:n]
}

// BenchmarkRules measures the rules engine's throughput (MB/s) on mixed
// text in 64 KiB pieces, the size the stream writer examines.
func BenchmarkRules(b *testing.B) {
	text := mixedText(b, 64<<10)
	r := NewRules()
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for range b.N {
		if _, err := r.Detect(text); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRulesPlain measures the rules engine on text without secrets
// or numbers worth a look: the common case of build and test logs.
func BenchmarkRulesPlain(b *testing.B) {
	line := "ok  \tgithub.com/acme/app/internal/server\t0.412s\tcoverage: 81.2% of statements\n"
	text := strings.Repeat(line, (64<<10)/len(line))
	r := NewRules()
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for range b.N {
		if _, err := r.Detect(text); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriter measures the stream writer with the rules engine fed in
// 32 KiB writes, as moat run --redact feeds it from a pipe.
func BenchmarkWriter(b *testing.B) {
	text := []byte(mixedText(b, 1<<20))
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for range b.N {
		w := NewWriter(io.Discard, NewRules())
		for off := 0; off < len(text); off += 32 << 10 {
			if _, err := w.Write(text[off:min(len(text), off+32<<10)]); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
