package model

import (
	"testing"
	"unicode/utf8"

	"github.com/pkoukk/tiktoken-go"
)

// tiktokenOf builds tiktoken-go's BPE from the fixture's ranks (each token's
// bytes and id; the fixture's ids follow merge order, as o200k's ranks do).
func tiktokenOf(t testing.TB, tok *Tokenizer) *tiktoken.Tiktoken {
	t.Helper()
	ranks := map[string]int{}
	for s, id := range tok.vocab {
		var b []byte
		for _, r := range s {
			b = append(b, charBytes[r])
		}
		ranks[string(b)] = id
	}
	bpe, err := tiktoken.NewCoreBPE(ranks, map[string]int{}, o200kPattern)
	if err != nil {
		t.Fatal(err)
	}
	return tiktoken.NewTiktoken(bpe, &tiktoken.Encoding{}, map[string]any{})
}

func checkAgainstTiktoken(t *testing.T, tok *Tokenizer, tk *tiktoken.Tiktoken, text string) {
	enc, err := tok.Encode(text)
	if err != nil {
		t.Fatal(err)
	}
	want := tk.EncodeOrdinary(text)
	if len(enc.IDs) != len(want) {
		t.Fatalf("%q: %d tokens, tiktoken-go %d (%v vs %v)", text, len(enc.IDs), len(want), enc.IDs, want)
	}
	for i := range want {
		if enc.IDs[i] != int64(want[i]) {
			t.Fatalf("%q: ids %v, tiktoken-go %v", text, enc.IDs, want)
		}
	}
}

// TestTokenizerMatchesTiktoken: fed the same ranks and split pattern,
// tiktoken-go (an independent BPE) gives the same ids.
func TestTokenizerMatchesTiktoken(t *testing.T) {
	tok := mustFixture(t)
	tk := tiktokenOf(t, tok)
	for _, text := range []string{fixtureCorpus, longText(5), "Hello WORLD, it's 12345 o'clock!\n\n\tok  ", "日本語のテキスト and émoji 😀", "aaaaaaaaaaaaaaaaaaa", ""} {
		checkAgainstTiktoken(t, tok, tk, text)
	}
}

func FuzzTokenizerTiktoken(f *testing.F) {
	for _, s := range []string{fixtureCorpus, "é ok", "  \n x", "alice@example.com"} {
		f.Add(s)
	}
	tok := mustFixture(f)
	tk := tiktokenOf(f, tok)
	f.Fuzz(func(t *testing.T, text string) {
		// tiktoken-go matches on the string as runes; both sides agree on
		// valid UTF-8 without the added token, which it is not told about.
		if len(text) > 2048 || !utf8.ValidString(text) || containsAdded(tok, text) {
			return
		}
		checkAgainstTiktoken(t, tok, tk, text)
	})
}

func containsAdded(tok *Tokenizer, text string) bool {
	for _, a := range tok.added {
		if len(a.content) > 0 && len(text) >= len(a.content) {
			for i := 0; i+len(a.content) <= len(text); i++ {
				if text[i:i+len(a.content)] == a.content {
					return true
				}
			}
		}
	}
	return false
}
