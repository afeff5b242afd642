package model

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func mustFixture(t testing.TB) *Tokenizer {
	t.Helper()
	tj, _ := fixtureTokenizer(t, "")
	tok, err := ParseTokenizer(tj)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// pieces returns the text of each token of enc.
func pieces(tok *Tokenizer, text string, enc Encoding) []string {
	var out []string
	for _, o := range enc.Offsets {
		out = append(out, text[o.Start:o.End])
	}
	return out
}

func TestPretokenizeO200k(t *testing.T) {
	tok := mustFixture(t)
	tests := []struct {
		in   string
		want []string
	}{
		{"Hello world", []string{"Hello", " world"}},
		{"a  b", []string{"a", " ", " b"}},
		{"123456", []string{"123", "456"}},
		{"x\n\ny", []string{"x", "\n\n", "y"}},
		{"don't", []string{"don't"}},
		{"I'm HERE", []string{"I'm", " HERE"}},
		{"alice@example.com", []string{"alice", "@example", ".com"}},
		{"", nil},
	}
	for _, tc := range tests {
		var got []string
		for _, p := range tok.pretokenize(tc.in) {
			got = append(got, tc.in[p.Start:p.End])
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("pretokenize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestEncodeFixture(t *testing.T) {
	tok := mustFixture(t)
	text := "my email is alice@example.com ok"
	enc, err := tok.Encode(text)
	if err != nil {
		t.Fatal(err)
	}
	// trim_offsets drops the leading space of " email" from its span.
	want := []string{"my", "email", "is", "alice", "@example", ".com", "ok"}
	if got := pieces(tok, text, enc); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("tokens %q, want %q", got, want)
	}
}

func TestEncodeAddedTokensAndTemplate(t *testing.T) {
	post := `{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<|endoftext|>","type_id":0}},{"Sequence":{"id":"A","type_id":0}},{"SpecialToken":{"id":"<|endoftext|>","type_id":0}}],"pair":[],"special_tokens":{"<|endoftext|>":{"id":"<|endoftext|>","ids":[9999],"tokens":["<|endoftext|>"]}}}`
	tj, eot := fixtureTokenizer(t, post)
	tok, err := ParseTokenizer(tj)
	if err != nil {
		t.Fatal(err)
	}
	text := "ok<|endoftext|>ok"
	enc, err := tok.Encode(text)
	if err != nil {
		t.Fatal(err)
	}
	wantIDs := []int64{9999, -1, int64(eot), -1, 9999}
	if len(enc.IDs) != len(wantIDs) {
		t.Fatalf("ids %v, want the shape %v", enc.IDs, wantIDs)
	}
	for i, w := range wantIDs {
		if w >= 0 && enc.IDs[i] != w {
			t.Errorf("id %d = %d, want %d", i, enc.IDs[i], w)
		}
	}
	if enc.Offsets[0] != (Span{0, 0}) || enc.Offsets[4] != (Span{len(text), len(text)}) {
		t.Errorf("template tokens have offsets %v %v, want empty", enc.Offsets[0], enc.Offsets[4])
	}
	if enc.Offsets[2] != (Span{2, 15}) {
		t.Errorf("added token offsets %v, want {2 15}", enc.Offsets[2])
	}
	// Without trim_offsets (a template post-processor) spaces stay in spans.
	enc, _ = tok.Encode(" ok")
	if enc.Offsets[1] != (Span{0, 3}) {
		t.Errorf("untrimmed offsets %v, want {0 3}", enc.Offsets[1])
	}
}

func TestEncodeOffsetsWidenToCharacters(t *testing.T) {
	tok := mustFixture(t)
	for _, text := range []string{"é", "日本語", "a😀b", "\xff\xfe", "ok \xe2\x82", "naïve café"} {
		enc, err := tok.Encode(text)
		if err != nil {
			t.Fatal(err)
		}
		for i, o := range enc.Offsets {
			if o.Start < 0 || o.End > len(text) || o.Start > o.End {
				t.Fatalf("%q token %d offsets %v out of range", text, i, o)
			}
			if !boundary(text, o.Start) || !boundary(text, o.End) {
				t.Errorf("%q token %d offsets %v split a character", text, i, o)
			}
		}
	}
	// "é" is two bytes, no merge: two tokens, both spanning the character.
	enc, _ := tok.Encode("é")
	if len(enc.IDs) != 2 || enc.Offsets[0] != (Span{0, 2}) || enc.Offsets[1] != (Span{0, 2}) {
		t.Errorf("é: ids %v offsets %v", enc.IDs, enc.Offsets)
	}
}

func boundary(s string, i int) bool {
	return i == 0 || i == len(s) || utf8.RuneStart(s[i])
}

// naiveMerge is the textbook BPE: merge the lowest-ranked adjacent pair,
// leftmost first, until none is left.
func naiveMerge(t *Tokenizer, word string) []int {
	var ids []int
	for i := 0; i < len(word); i++ {
		ids = append(ids, t.byteIDs[word[i]])
	}
	for {
		best, at := -1, -1
		for i := 0; i+1 < len(ids); i++ {
			if m, ok := t.merges[[2]int{ids[i], ids[i+1]}]; ok && (best < 0 || m.rank < best) {
				best, at = m.rank, i
			}
		}
		if at < 0 {
			return ids
		}
		m := t.merges[[2]int{ids[at], ids[at+1]}]
		ids = append(ids[:at], append([]int{m.id}, ids[at+2:]...)...)
	}
}

func checkEncoding(t *testing.T, tok *Tokenizer, text string) {
	enc, err := tok.Encode(text)
	if err != nil {
		t.Fatalf("Encode(%q): %v", text, err)
	}
	if len(enc.IDs) != len(enc.Offsets) {
		t.Fatalf("%d ids, %d offsets", len(enc.IDs), len(enc.Offsets))
	}
	// The tokens' bytes concatenate back to the text.
	var buf bytes.Buffer
	for _, id := range enc.IDs {
		for s, i := range tok.vocab {
			if int64(i) == id {
				for _, r := range s {
					buf.WriteByte(charBytes[r])
				}
				break
			}
		}
		if id == int64(tok.added[0].id) {
			buf.WriteString(tok.added[0].content)
		}
	}
	if buf.String() != text {
		t.Fatalf("tokens of %q decode to %q", text, buf.String())
	}
	prev := 0
	for i, o := range enc.Offsets {
		if o.Start < 0 || o.End > len(text) || o.Start > o.End || !boundary(text, o.Start) || !boundary(text, o.End) {
			t.Fatalf("%q: token %d offsets %v", text, i, o)
		}
		if o.End < prev && o.End != o.Start {
			t.Fatalf("%q: token %d offsets %v go backwards", text, i, o)
		}
		prev = max(prev, o.End)
	}
	for _, p := range tok.pretokenize(text) {
		w := text[p.Start:p.End]
		got, _ := tok.merge(w)
		if want := naiveMerge(tok, w); !equalInts(got, want) {
			t.Fatalf("merge(%q) = %v, naive BPE gives %v", w, got, want)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestEncodeRoundTripAndNaiveBPE(t *testing.T) {
	tok := mustFixture(t)
	for _, text := range []string{fixtureCorpus, longText(3), "aaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "ememememailail", "\x00\x01\n\r\t", "<|endoftext|>x<|endoftext|>", "日本 ok"} {
		checkEncoding(t, tok, text)
	}
}

func FuzzTokenizer(f *testing.F) {
	for _, s := range []string{fixtureCorpus, "é", "\xff", "a<|endoftext|>b", "  \n\n  x", "alice@example.com"} {
		f.Add(s)
	}
	tok := mustFixture(f)
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 4096 {
			return
		}
		checkEncoding(t, tok, text)
	})
}

func TestParseTokenizerRefusesWhatItCannotMatch(t *testing.T) {
	base, _ := fixtureTokenizer(t, "")
	tests := []struct {
		name, old, new, want string
	}{
		{"normalizer", `"normalizer":null`, `"normalizer":{"type":"NFC"}`, "normalizer"},
		{"model type", `"type":"BPE"`, `"type":"WordPiece"`, "model type"},
		{"byte fallback", `"byte_fallback":false`, `"byte_fallback":true`, "byte_fallback"},
		{"prefix space", `"add_prefix_space":false,"trim_offsets":true,"type":"ByteLevel","use_regex":false}]`, `"add_prefix_space":true,"trim_offsets":true,"type":"ByteLevel","use_regex":false}]`, "add_prefix_space"},
		{"split behaviour", `"behavior":"Isolated"`, `"behavior":"Contiguous"`, "behavior"},
		{"unknown pre-tokenizer", `"type":"Split"`, `"type":"Metaspace"`, "Metaspace"},
		{"unknown post-processor", `"post_processor":{"type":"ByteLevel"`, `"post_processor":{"type":"BertProcessing"`, "BertProcessing"},
		{"bad merge", `"merges":["`, `"merges":["zz qq","`, "outside the vocab"},
		{"not json", `{`, `[`, "tokenizer.json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := string(base)
			if !strings.Contains(s, tc.old) {
				t.Fatalf("fixture lacks %q", tc.old)
			}
			_, err := ParseTokenizer([]byte(strings.Replace(s, tc.old, tc.new, 1)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestParseTokenizerMergeForms(t *testing.T) {
	base, _ := fixtureTokenizer(t, "")
	s := string(base)
	i := strings.Index(s, `"merges":[`)
	j := strings.Index(s[i:], "]") + i
	var pairs []string
	for _, m := range strings.Split(s[i+len(`"merges":[`):j], ",") {
		a, b, _ := strings.Cut(strings.Trim(m, `"`), " ")
		pairs = append(pairs, `["`+a+`","`+b+`"]`)
	}
	alt := s[:i] + `"merges":[` + strings.Join(pairs, ",") + s[j:]
	t1, err := ParseTokenizer(base)
	if err != nil {
		t.Fatal(err)
	}
	t2, err := ParseTokenizer([]byte(alt))
	if err != nil {
		t.Fatal(err)
	}
	e1, _ := t1.Encode(fixtureCorpus)
	e2, _ := t2.Encode(fixtureCorpus)
	if len(e1.IDs) != len(e2.IDs) {
		t.Fatalf("pair-form merges give %d tokens, string form %d", len(e2.IDs), len(e1.IDs))
	}
	// ignore_merges takes a word that is a token whole.
	t3, err := ParseTokenizer([]byte(strings.Replace(s, `"ignore_merges":false`, `"ignore_merges":true`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if e3, _ := t3.Encode("email"); len(e3.IDs) != 1 {
		t.Errorf("ignore_merges: %d tokens for a vocab word", len(e3.IDs))
	}
}

func TestTrimOffsetsKeepsThePrefixSpaceOfTheFirstToken(t *testing.T) {
	tj, _ := fixtureTokenizer(t, `{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":false}`)
	tok, err := ParseTokenizer(tj)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		text string
		want []Span
	}{
		{" ok", []Span{{0, 3}}},           // first token: its one space stays
		{"my ok", []Span{{0, 2}, {3, 5}}}, // later token: trimmed
	} {
		enc, _ := tok.Encode(tc.text)
		if len(enc.Offsets) != len(tc.want) {
			t.Fatalf("%q: offsets %v, want %v", tc.text, enc.Offsets, tc.want)
		}
		for i := range tc.want {
			if enc.Offsets[i] != tc.want[i] {
				t.Errorf("%q: offsets %v, want %v", tc.text, enc.Offsets, tc.want)
			}
		}
	}
}
