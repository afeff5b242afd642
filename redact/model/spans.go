package model

import (
	"math"
	"sort"
)

// TokenSpan is a labelled run of tokens [Start, End] (End inclusive) of a
// decoded window, with the span's score. The zero value is a one-token span
// at 0 with no category.
type TokenSpan struct {
	Start, End int
	Category   string
	Score      float64
}

// ByteSpan is a labelled byte range [Start, End) of a text. The zero value
// is empty.
type ByteSpan struct {
	Start, End int
	Category   string
	Score      float64
}

// PathSpans reads the spans of a decoded path: B-x opens a span that E-x
// closes, S-x is a span of its own; a span still open at the end of the
// window is dropped, as the overlap of the next window covers it. A span's
// score is the lower of the sigmoids of its first and last tokens' logits.
func PathSpans(path []int, labels []Label, logits [][]float32) []TokenSpan {
	var out []TokenSpan
	open, cat := -1, ""
	sig := func(t int) float64 {
		if t < len(logits) && path[t] < len(logits[t]) {
			return 1 / (1 + math.Exp(-float64(logits[t][path[t]])))
		}
		return 0
	}
	for t, c := range path {
		if c < 0 || c >= len(labels) {
			open = -1
			continue
		}
		l := labels[c]
		switch l.Tag {
		case TagO:
			open = -1
		case TagB:
			open, cat = t, l.Category
		case TagI:
			if open >= 0 && cat != l.Category {
				open = -1
			}
		case TagE:
			if open >= 0 && cat == l.Category {
				out = append(out, TokenSpan{open, t, cat, math.Min(sig(open), sig(t))})
			}
			open = -1
		case TagS:
			out = append(out, TokenSpan{t, t, l.Category, sig(t)})
			open = -1
		}
	}
	return out
}

// ToBytes maps a token span to bytes with the tokens' offsets, skipping
// zero-width tokens (special tokens) at either end; ok is false when every
// token of the span is zero-width.
func ToBytes(s TokenSpan, offsets []Span) (ByteSpan, bool) {
	a, b := s.Start, s.End
	for a <= b && a < len(offsets) && offsets[a].End <= offsets[a].Start {
		a++
	}
	if b >= len(offsets) {
		b = len(offsets) - 1
	}
	for b >= a && b >= 0 && offsets[b].End <= offsets[b].Start {
		b--
	}
	if a > b || a >= len(offsets) || b < 0 {
		return ByteSpan{}, false
	}
	return ByteSpan{Start: offsets[a].Start, End: offsets[b].End, Category: s.Category, Score: s.Score}, true
}

// MergeSpans sorts spans by (start, end, category) and merges those that
// overlap, or touch and share a category. A merged span keeps the first
// span's category and the highest score.
func MergeSpans(spans []ByteSpan) []ByteSpan {
	if len(spans) == 0 {
		return nil
	}
	s := append([]ByteSpan(nil), spans...)
	sort.Slice(s, func(i, j int) bool {
		if s[i].Start != s[j].Start {
			return s[i].Start < s[j].Start
		}
		if s[i].End != s[j].End {
			return s[i].End < s[j].End
		}
		return s[i].Category < s[j].Category
	})
	out := s[:1]
	for _, x := range s[1:] {
		last := &out[len(out)-1]
		if x.Start < last.End || (x.Start == last.End && x.Category == last.Category) {
			last.End = max(last.End, x.End)
			last.Score = math.Max(last.Score, x.Score)
			continue
		}
		out = append(out, x)
	}
	return out
}
