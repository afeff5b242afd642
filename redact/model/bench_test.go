package model

import (
	"math/rand"
	"strings"
	"testing"
)

// benchText is about 1 MB of mixed prose, numbers and addresses.
var benchText = strings.Repeat("Contact alice@example.com or call +1 555 0100 about invoice 4242-1234; see https://example.org/a?b=1 tomorrow. ", 9000)

func BenchmarkEncode(b *testing.B) {
	tok := mustFixture(b)
	b.SetBytes(int64(len(benchText)))
	for b.Loop() {
		if _, err := tok.Encode(benchText); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeWindow is the Viterbi decode of one window of 512 tokens
// over the 33 labels.
func BenchmarkDecodeWindow(b *testing.B) {
	d := NewDecoder(publishedLabels(b), Biases{})
	rng := rand.New(rand.NewSource(1))
	logits := make([][]float32, 512)
	for i := range logits {
		logits[i] = make([]float32, NumLabels)
		for c := range logits[i] {
			logits[i][c] = float32(rng.NormFloat64())
		}
	}
	for b.Loop() {
		d.Decode(logits)
	}
}

// BenchmarkEngine is the whole pipeline on 1 MB around a free model.
func BenchmarkEngine(b *testing.B) {
	tok := mustFixture(b)
	cfg, _ := ParseConfig(fixtureConfig(0))
	e, _ := NewEngine(tok, cfg, Biases{}, 512, tableRunner(labelTable(b, tok)))
	b.SetBytes(int64(len(benchText)))
	for b.Loop() {
		if _, err := e.Detect(benchText); err != nil {
			b.Fatal(err)
		}
	}
}
