package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// Span is a half-open byte range [Start, End) of a text. The zero value is
// the empty span at 0.
type Span struct {
	Start, End int
}

// Encoding is a tokenized text: one id and one byte span of the source text
// per token. Special tokens added by the post-processor have empty spans.
// The zero value is an empty encoding.
type Encoding struct {
	IDs     []int64
	Offsets []Span
}

// Tokenizer is a byte-level BPE tokenizer read from a Hugging Face
// tokenizer.json (the o200k-style tokenizer of openai/privacy-filter). It
// supports what such files use: no normalizer; Split (regex or literal,
// isolated or removed) and ByteLevel pre-tokenizers, alone or in a Sequence;
// a BPE model with merges (ignore_merges honoured); added tokens matched in
// the text; ByteLevel (trim_offsets) and TemplateProcessing post-processors.
// Anything else is refused when the file is read, so the engine never
// tokenizes differently from the reference without saying so.
//
// Offsets are byte offsets into the input, widened to whole UTF-8
// characters as Hugging Face's byte-level alignment does. A Tokenizer is safe
// for concurrent use. The zero value is not usable; use [ParseTokenizer].
type Tokenizer struct {
	vocab        map[string]int // byte-level token string -> id
	merges       map[[2]int]merge
	ignoreMerges bool
	byteIDs      [256]int // id of each single byte, -1 if absent
	splits       []splitter
	added        []addedToken // longest content first
	prefix       []int64      // template tokens before the sequence
	suffix       []int64      // and after it
	trimOffsets  bool
	keepFirst    bool    // trim_offsets with add_prefix_space keeps one leading space of the first token
	lens         []int32 // bytes per vocab id

	mu    sync.Mutex
	cache map[string][]int
}

type merge struct{ rank, id int }

type addedToken struct {
	content string
	id      int
}

// splitter is one pre-tokenizer split: matches become their own pieces,
// or are dropped when remove is set.
type splitter struct {
	re      *regexp2.Regexp
	literal string
	remove  bool
}

// gpt2Pattern is what a ByteLevel pre-tokenizer with use_regex splits on.
const gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

// tokenizerJSON is the part of tokenizer.json the tokenizer reads.
type tokenizerJSON struct {
	AddedTokens []struct {
		ID      int    `json:"id"`
		Content string `json:"content"`
	} `json:"added_tokens"`
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
	PostProcessor json.RawMessage `json:"post_processor"`
	Model         struct {
		Type         string            `json:"type"`
		Vocab        map[string]int    `json:"vocab"`
		Merges       []json.RawMessage `json:"merges"`
		IgnoreMerges bool              `json:"ignore_merges"`
		ByteFallback bool              `json:"byte_fallback"`
		Dropout      *float64          `json:"dropout"`
		Prefix       *string           `json:"continuing_subword_prefix"`
		Suffix       *string           `json:"end_of_word_suffix"`
	} `json:"model"`
}

// ParseTokenizer reads a tokenizer.json.
func ParseTokenizer(data []byte) (*Tokenizer, error) {
	var raw tokenizerJSON
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("tokenizer.json: %v", err)
	}
	t := &Tokenizer{cache: map[string][]int{}}
	if err := t.readModel(&raw); err != nil {
		return nil, fmt.Errorf("tokenizer.json: %v", err)
	}
	if n := strings.TrimSpace(string(raw.Normalizer)); n != "" && n != "null" {
		return nil, fmt.Errorf("tokenizer.json: normalizer %s is not supported", shorten(n))
	}
	if err := t.readPreTokenizer(raw.PreTokenizer); err != nil {
		return nil, fmt.Errorf("tokenizer.json: pre_tokenizer: %v", err)
	}
	if err := t.readPostProcessor(raw.PostProcessor); err != nil {
		return nil, fmt.Errorf("tokenizer.json: post_processor: %v", err)
	}
	for _, a := range raw.AddedTokens {
		if a.Content != "" {
			t.added = append(t.added, addedToken{content: a.Content, id: a.ID})
		}
	}
	sort.SliceStable(t.added, func(i, j int) bool { return len(t.added[i].content) > len(t.added[j].content) })
	return t, nil
}

func (t *Tokenizer) readModel(raw *tokenizerJSON) error {
	m := &raw.Model
	if m.Type != "BPE" {
		return fmt.Errorf("model type %q is not supported (want BPE)", m.Type)
	}
	if m.ByteFallback || (m.Dropout != nil && *m.Dropout != 0) || (m.Prefix != nil && *m.Prefix != "") || (m.Suffix != nil && *m.Suffix != "") {
		return errors.New("BPE byte_fallback, dropout and subword prefixes or suffixes are not supported")
	}
	if len(m.Vocab) == 0 {
		return errors.New("empty vocab")
	}
	t.vocab = m.Vocab
	t.ignoreMerges = m.IgnoreMerges
	maxID := 0
	for tok, id := range t.vocab {
		if id < 0 || id > 1<<24 {
			return fmt.Errorf("vocab id %d of %q out of range", id, tok)
		}
		maxID = max(maxID, id)
	}
	t.lens = make([]int32, maxID+1)
	for tok, id := range t.vocab {
		n, ok := byteLevelLen(tok)
		if !ok {
			n = -1 // not a byte-level string: BPE never produces it
		}
		t.lens[id] = int32(n)
	}
	for b := range t.byteIDs {
		t.byteIDs[b] = -1
		if id, ok := t.vocab[string(byteChars[b])]; ok {
			t.byteIDs[b] = id
		}
	}
	t.merges = make(map[[2]int]merge, len(m.Merges))
	for rank, rm := range m.Merges {
		var a, b string
		var s string
		var pair []string
		switch {
		case json.Unmarshal(rm, &s) == nil:
			var ok bool
			if a, b, ok = strings.Cut(s, " "); !ok {
				return fmt.Errorf("merge %d %q: want two tokens", rank, s)
			}
		case json.Unmarshal(rm, &pair) == nil && len(pair) == 2:
			a, b = pair[0], pair[1]
		default:
			return fmt.Errorf("merge %d: want \"a b\" or [a, b]", rank)
		}
		ia, oka := t.vocab[a]
		ib, okb := t.vocab[b]
		im, okm := t.vocab[a+b]
		if !oka || !okb || !okm {
			return fmt.Errorf("merge %d (%q, %q) has a token outside the vocab", rank, a, b)
		}
		if _, dup := t.merges[[2]int{ia, ib}]; !dup {
			t.merges[[2]int{ia, ib}] = merge{rank: rank, id: im}
		}
	}
	return nil
}

type component struct {
	Type          string            `json:"type"`
	Pretokenizers []json.RawMessage `json:"pretokenizers"`
	Processors    []json.RawMessage `json:"processors"`
	Pattern       struct {
		Regex  *string `json:"Regex"`
		String *string `json:"String"`
	} `json:"pattern"`
	Behavior       string          `json:"behavior"`
	Invert         bool            `json:"invert"`
	AddPrefixSpace bool            `json:"add_prefix_space"`
	UseRegex       *bool           `json:"use_regex"`
	TrimOffsets    *bool           `json:"trim_offsets"`
	Single         json.RawMessage `json:"single"`
	SpecialTokens  map[string]struct {
		IDs []int64 `json:"ids"`
	} `json:"special_tokens"`
}

func (t *Tokenizer) readPreTokenizer(raw json.RawMessage) error {
	if s := strings.TrimSpace(string(raw)); s == "" || s == "null" {
		return nil
	}
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return err
	}
	switch c.Type {
	case "Sequence":
		for _, p := range c.Pretokenizers {
			if err := t.readPreTokenizer(p); err != nil {
				return err
			}
		}
		return nil
	case "Split":
		if c.Invert {
			return errors.New("Split with invert is not supported")
		}
		var sp splitter
		switch c.Behavior {
		case "Isolated":
		case "Removed":
			sp.remove = true
		default:
			return fmt.Errorf("Split behavior %q is not supported", c.Behavior)
		}
		switch {
		case c.Pattern.Regex != nil:
			re, err := regexp2.Compile(*c.Pattern.Regex, regexp2.None)
			if err != nil {
				return fmt.Errorf("Split regex: %v", err)
			}
			sp.re = re
		case c.Pattern.String != nil && *c.Pattern.String != "":
			sp.literal = *c.Pattern.String
		default:
			return errors.New("Split without a pattern")
		}
		t.splits = append(t.splits, sp)
		return nil
	case "ByteLevel":
		if c.AddPrefixSpace {
			return errors.New("ByteLevel add_prefix_space is not supported")
		}
		if c.UseRegex == nil || *c.UseRegex {
			t.splits = append(t.splits, splitter{re: regexp2.MustCompile(gpt2Pattern, regexp2.None)})
		}
		return nil
	}
	return fmt.Errorf("type %q is not supported", c.Type)
}

func (t *Tokenizer) readPostProcessor(raw json.RawMessage) error {
	if s := strings.TrimSpace(string(raw)); s == "" || s == "null" {
		return nil
	}
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return err
	}
	switch c.Type {
	case "Sequence":
		for _, p := range c.Processors {
			if err := t.readPostProcessor(p); err != nil {
				return err
			}
		}
		return nil
	case "ByteLevel":
		if c.TrimOffsets == nil || *c.TrimOffsets {
			t.trimOffsets = true
			t.keepFirst = c.AddPrefixSpace
		}
		return nil
	case "TemplateProcessing":
		var items []struct {
			Special *struct {
				ID string `json:"id"`
			} `json:"SpecialToken"`
			Sequence *struct {
				ID string `json:"id"`
			} `json:"Sequence"`
		}
		if err := json.Unmarshal(c.Single, &items); err != nil {
			return fmt.Errorf("TemplateProcessing single: %v", err)
		}
		seen := false
		for _, it := range items {
			switch {
			case it.Sequence != nil:
				if seen || it.Sequence.ID != "A" {
					return errors.New("TemplateProcessing single must hold sequence A once")
				}
				seen = true
			case it.Special != nil:
				st, ok := c.SpecialTokens[it.Special.ID]
				if !ok || len(st.IDs) == 0 {
					return fmt.Errorf("TemplateProcessing special token %q has no ids", it.Special.ID)
				}
				if seen {
					t.suffix = append(t.suffix, st.IDs...)
				} else {
					t.prefix = append(t.prefix, st.IDs...)
				}
			default:
				return errors.New("TemplateProcessing item is neither a special token nor a sequence")
			}
		}
		if !seen {
			return errors.New("TemplateProcessing single has no sequence")
		}
		return nil
	}
	return fmt.Errorf("type %q is not supported", c.Type)
}

// VocabSize returns one more than the largest token id the tokenizer knows.
func (t *Tokenizer) VocabSize() int {
	n := 0
	for _, id := range t.vocab {
		n = max(n, id+1)
	}
	for _, a := range t.added {
		n = max(n, a.id+1)
	}
	return n
}

// Encode tokenizes text with the post-processor's special tokens. It fails
// only when a byte has no token in the vocabulary.
func (t *Tokenizer) Encode(text string) (Encoding, error) {
	var enc Encoding
	for _, id := range t.prefix {
		enc.IDs = append(enc.IDs, id)
		enc.Offsets = append(enc.Offsets, Span{})
	}
	err := t.eachAddedSplit(text, func(start, end int, added int) error {
		if added >= 0 {
			enc.IDs = append(enc.IDs, int64(added))
			enc.Offsets = append(enc.Offsets, Span{start, end})
			return nil
		}
		for _, p := range t.pretokenize(text[start:end]) {
			if err := t.bpe(text, start+p.Start, start+p.End, &enc); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Encoding{}, err
	}
	for _, id := range t.suffix {
		enc.IDs = append(enc.IDs, id)
		enc.Offsets = append(enc.Offsets, Span{len(text), len(text)})
	}
	return enc, nil
}

// eachAddedSplit walks text, calling fn with each added token found (its
// id) and each stretch between them (id -1), leftmost and longest first.
func (t *Tokenizer) eachAddedSplit(text string, fn func(start, end, id int) error) error {
	last := 0
	if len(t.added) > 0 {
		for i := 0; i < len(text); {
			found := -1
			for k, a := range t.added {
				if strings.HasPrefix(text[i:], a.content) {
					found = k
					break
				}
			}
			if found < 0 {
				i++
				continue
			}
			if i > last {
				if err := fn(last, i, -1); err != nil {
					return err
				}
			}
			end := i + len(t.added[found].content)
			if err := fn(i, end, t.added[found].id); err != nil {
				return err
			}
			i, last = end, end
		}
	}
	if last < len(text) {
		return fn(last, len(text), -1)
	}
	return nil
}

// pretokenize splits s by each splitter in turn and returns the pieces'
// byte spans within s.
func (t *Tokenizer) pretokenize(s string) []Span {
	pieces := []Span{{0, len(s)}}
	for _, sp := range t.splits {
		var next []Span
		for _, p := range pieces {
			next = sp.split(s, p, next)
		}
		pieces = next
	}
	return pieces
}

// split appends the pieces of s[p.Start:p.End] to out.
func (sp splitter) split(s string, p Span, out []Span) []Span {
	sub := s[p.Start:p.End]
	cursor := 0
	emit := func(a, b int, match bool) {
		if a < b && !(match && sp.remove) {
			out = append(out, Span{p.Start + a, p.Start + b})
		}
	}
	if sp.literal != "" {
		for {
			i := strings.Index(sub[cursor:], sp.literal)
			if i < 0 {
				break
			}
			emit(cursor, cursor+i, false)
			emit(cursor+i, cursor+i+len(sp.literal), true)
			cursor += i + len(sp.literal)
		}
		emit(cursor, len(sub), false)
		return out
	}
	// regexp2 works on runes: map rune indexes back to byte offsets. Go
	// decodes each invalid byte to one U+FFFD, so the mapping is exact.
	runes := []rune(sub)
	pos := make([]int, 0, len(runes)+1)
	for i := 0; i < len(sub); {
		pos = append(pos, i)
		_, w := utf8.DecodeRuneInString(sub[i:])
		i += w
	}
	pos = append(pos, len(sub))
	m, err := sp.re.FindRunesMatch(runes)
	for err == nil && m != nil {
		a, b := pos[m.Index], pos[m.Index+m.Length]
		emit(cursor, a, false)
		emit(a, b, true)
		cursor = b
		m, err = sp.re.FindNextMatch(m)
	}
	emit(cursor, len(sub), false)
	return out
}

// bpe encodes the piece text[start:end] and appends its tokens to enc.
func (t *Tokenizer) bpe(text string, start, end int, enc *Encoding) error {
	word := text[start:end]
	ids, err := t.wordIDs(word)
	if err != nil {
		return err
	}
	// Each symbol of the word is one byte, so token lengths are byte
	// lengths; recover them from the vocabulary's byte strings.
	at := start
	for _, id := range ids {
		n := t.tokenLen(id)
		s := Span{at, at + n}
		at += n
		first := len(enc.IDs) == 0 || s.Start == 0
		enc.IDs = append(enc.IDs, int64(id))
		enc.Offsets = append(enc.Offsets, t.offsets(text, s, first))
	}
	return nil
}

// offsets widens a token's bytes to whole characters of text and, with
// trim_offsets, drops its leading and trailing spaces, as Hugging Face's
// ByteLevel post-processor does (keeping a single leading space of the
// first token when it adds a prefix space).
func (t *Tokenizer) offsets(text string, s Span, first bool) Span {
	if t.trimOffsets {
		lead := 0
		for s.Start+lead < s.End && text[s.Start+lead] == ' ' {
			lead++
		}
		if first && t.keepFirst && lead == 1 {
			lead = 0
		}
		s.Start += lead
		for s.End > s.Start && text[s.End-1] == ' ' {
			s.End--
		}
	}
	if s.Start == s.End { // all spaces, trimmed away: empty, on a boundary
		for s.Start > 0 && s.Start < len(text) && !utf8.RuneStart(text[s.Start]) {
			s.Start--
		}
		s.End = s.Start
		return s
	}
	// Widen to the boundaries redact.Apply accepts: a byte that does not
	// continue a multi-byte sequence. For valid UTF-8 these are whole
	// characters, as Hugging Face's byte-level alignment gives.
	for s.Start > 0 && !utf8.RuneStart(text[s.Start]) {
		s.Start--
	}
	for s.End < len(text) && !utf8.RuneStart(text[s.End]) {
		s.End++
	}
	return s
}

// tokenLen is the number of bytes token id stands for.
func (t *Tokenizer) tokenLen(id int) int {
	if id >= 0 && id < len(t.lens) {
		return int(t.lens[id])
	}
	return 0
}

// shorten cuts a JSON fragment for an error message.
func shorten(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}
