package model

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/dlclark/regexp2"
)

// o200kPattern is the pre-tokenizer split of o200k-style tokenizers.
const o200kPattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// fixtureCorpus trains the fixture tokenizer's merges, so that the words of
// the tests are single tokens.
const fixtureCorpus = "my email is alice@example.com ok, call bob at 555 1234 today. Contact me soon! "

// published is the label order of openai/privacy-filter's config.json.
var published = func() []string {
	out := []string{"O"}
	for _, c := range []string{"account_number", "private_address", "private_date", "private_email", "private_person", "private_phone", "private_url", "secret"} {
		for _, p := range []string{"B", "I", "E", "S"} {
			out = append(out, p+"-"+c)
		}
	}
	return out
}()

func labelIndex(name string) int {
	for i, l := range published {
		if l == name {
			return i
		}
	}
	panic("no label " + name)
}

// trainMerges learns n byte-level BPE merges from corpus: the most frequent
// adjacent pair first, ties broken by the pair's text.
func trainMerges(corpus string, n int) [][2]string {
	re := regexp2.MustCompile(o200kPattern, regexp2.None)
	var words [][]string
	for m, _ := re.FindStringMatch(corpus); m != nil; m, _ = re.FindNextMatch(m) {
		var w []string
		for _, b := range []byte(m.String()) {
			w = append(w, string(byteChars[b]))
		}
		words = append(words, w)
	}
	var merges [][2]string
	for len(merges) < n {
		count := map[[2]string]int{}
		for _, w := range words {
			for i := 0; i+1 < len(w); i++ {
				count[[2]string{w[i], w[i+1]}]++
			}
		}
		if len(count) == 0 {
			break
		}
		pairs := make([][2]string, 0, len(count))
		for p := range count {
			pairs = append(pairs, p)
		}
		sort.Slice(pairs, func(i, j int) bool {
			if count[pairs[i]] != count[pairs[j]] {
				return count[pairs[i]] > count[pairs[j]]
			}
			return pairs[i][0]+" "+pairs[i][1] < pairs[j][0]+" "+pairs[j][1]
		})
		best := pairs[0]
		merges = append(merges, best)
		for k, w := range words {
			var out []string
			for i := 0; i < len(w); i++ {
				if i+1 < len(w) && w[i] == best[0] && w[i+1] == best[1] {
					out = append(out, w[i]+w[i+1])
					i++
				} else {
					out = append(out, w[i])
				}
			}
			words[k] = out
		}
	}
	return merges
}

// fixtureTokenizer returns a tokenizer.json in the shape of the model's:
// 256 byte tokens, the trained merges, <|endoftext|> as an added token, an
// o200k Split and a ByteLevel pre-tokenizer, a ByteLevel post-processor.
func fixtureTokenizer(t testing.TB, post string) ([]byte, int) {
	t.Helper()
	vocab := map[string]int{}
	for b := 0; b < 256; b++ {
		vocab[string(byteChars[b])] = b
	}
	var mergeStrs []string
	for _, m := range trainMerges(fixtureCorpus, 120) {
		if _, ok := vocab[m[0]+m[1]]; !ok {
			vocab[m[0]+m[1]] = len(vocab)
		}
		mergeStrs = append(mergeStrs, m[0]+" "+m[1])
	}
	eot := len(vocab)
	if post == "" {
		post = `{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":false}`
	}
	doc := map[string]any{
		"version":      "1.0",
		"truncation":   nil,
		"padding":      nil,
		"added_tokens": []map[string]any{{"id": eot, "content": "<|endoftext|>", "special": true}},
		"normalizer":   nil,
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": o200kPattern}, "behavior": "Isolated", "invert": false},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false},
		}},
		"post_processor": json.RawMessage(post),
		"decoder":        map[string]any{"type": "ByteLevel"},
		"model": map[string]any{"type": "BPE", "dropout": nil, "unk_token": nil, "continuing_subword_prefix": nil,
			"end_of_word_suffix": nil, "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
			"vocab": vocab, "merges": mergeStrs},
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b, eot
}

func fixtureConfig(pad int) []byte {
	id2label := map[string]string{}
	for i, l := range published {
		id2label[itoa(i)] = l
	}
	b, _ := json.Marshal(map[string]any{"architectures": []string{"OpenAIPrivacyFilterForTokenClassification"}, "id2label": id2label, "pad_token_id": pad})
	return b
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

const zeroCalibration = `{"operating_points":{"default":{"biases":{"transition_bias_background_stay":0,"transition_bias_background_to_start":0,"transition_bias_inside_to_continue":0,"transition_bias_inside_to_end":0,"transition_bias_end_to_background":0,"transition_bias_end_to_start":0}}}}`

// writeFixtureAssets writes the four JSON assets into dir with the given
// token limit and returns the tokenizer and the pad id.
func writeFixtureAssets(t testing.TB, dir string, limit int) (*Tokenizer, int) {
	t.Helper()
	tj, eot := fixtureTokenizer(t, "")
	files := map[string][]byte{
		ConfigFile:          fixtureConfig(eot),
		TokenizerFile:       tj,
		TokenizerConfigFile: []byte(`{"model_max_length": ` + itoa(limit) + `, "pad_token": "<|endoftext|>"}`),
		CalibrationFile:     []byte(zeroCalibration),
	}
	for name, b := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tok, err := ParseTokenizer(tj)
	if err != nil {
		t.Fatal(err)
	}
	return tok, eot
}

// tokenLabels is the fixture model: a label per token, by the token's text.
// " alice" begins an email, "@example" continues it and ".com" ends it;
// " bob" is a person on its own.
var tokenLabels = map[string]string{
	" alice":   "B-private_email",
	"@example": "I-private_email",
	".com":     "E-private_email",
	" bob":     "S-private_person",
}

// labelTable returns, for every id of tok, the label index the fixture
// model predicts for it.
func labelTable(t testing.TB, tok *Tokenizer) []int {
	t.Helper()
	table := make([]int, tok.VocabSize())
	found := 0
	for s, id := range tok.vocab {
		var b []byte
		for _, r := range s {
			b = append(b, charBytes[r])
		}
		if l, ok := tokenLabels[string(b)]; ok {
			table[id] = labelIndex(l)
			found++
		}
	}
	if found != len(tokenLabels) {
		t.Fatalf("fixture tokenizer has %d of the %d labelled tokens as single tokens", found, len(tokenLabels))
	}
	return table
}

// tableRunner is the fixture model in Go: logit 10 for each token's label.
func tableRunner(table []int) RunnerFunc {
	return func(ids, mask []int64, batch, seqLen int) ([]float32, error) {
		out := make([]float32, batch*seqLen*NumLabels)
		for i, id := range ids {
			l := 0
			if int(id) < len(table) {
				l = table[id]
			}
			out[i*NumLabels+l] = 10 * float32(mask[i])
		}
		return out, nil
	}
}

// emailText is the PF9-style input: filler, then an email and a person
// near the tail, then a marker that must survive.
func longText(filler int) string {
	return strings.Repeat("ok today. ", filler) + "my email is alice@example.com, call bob soon. TAIL-MARKER-END"
}
