package model

import (
	"testing"

	"github.com/moat-sandbox/moat/redact"
)

func TestPathSpans(t *testing.T) {
	O, B, I, E, S := 0, 1, 2, 3, 4
	tests := []struct {
		name string
		path []int
		want []TokenSpan
	}{
		{"single", []int{O, S, O}, []TokenSpan{{1, 1, "x", 0}}},
		{"B E", []int{B, E}, []TokenSpan{{0, 1, "x", 0}}},
		{"B I I E", []int{O, B, I, I, E, O}, []TokenSpan{{1, 4, "x", 0}}},
		{"unclosed at the end is dropped", []int{O, B, I}, nil},
		{"E without B", []int{O, E}, nil},
		{"back to back", []int{S, S, B, E}, []TokenSpan{{0, 0, "x", 0}, {1, 1, "x", 0}, {2, 3, "x", 0}}},
	}
	for _, tc := range tests {
		logits := make([][]float32, len(tc.path))
		for i := range logits {
			logits[i] = make([]float32, len(smallLabels))
		}
		got := PathSpans(tc.path, smallLabels, logits)
		if len(got) != len(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
			continue
		}
		for i := range got {
			if got[i].Start != tc.want[i].Start || got[i].End != tc.want[i].End || got[i].Category != tc.want[i].Category {
				t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
			}
			if got[i].Score != 0.5 { // sigmoid(0)
				t.Errorf("%s: score %v, want 0.5", tc.name, got[i].Score)
			}
		}
	}
	// The score is the lower sigmoid of the first and last tokens.
	logits := [][]float32{{0, 4, 0, 0, 0}, {0, 0, 0, -1, 0}}
	if s := PathSpans([]int{B, E}, smallLabels, logits)[0].Score; s > 0.27 || s < 0.26 {
		t.Errorf("score %v, want sigmoid(-1) = 0.269", s)
	}
	// A category change inside drops the span.
	two := []Label{{}, {TagB, "a"}, {TagI, "b"}, {TagE, "b"}}
	if got := PathSpans([]int{1, 2, 3}, two, make([][]float32, 3)); len(got) != 0 {
		t.Errorf("mixed categories: %v", got)
	}
}

func TestToBytes(t *testing.T) {
	offsets := []Span{{0, 0}, {0, 2}, {3, 5}, {5, 5}, {6, 9}, {9, 9}}
	tests := []struct {
		ts   TokenSpan
		want ByteSpan
		ok   bool
	}{
		{TokenSpan{1, 2, "a", 1}, ByteSpan{0, 5, "a", 1}, true},
		{TokenSpan{0, 2, "a", 1}, ByteSpan{0, 5, "a", 1}, true},  // leading special skipped
		{TokenSpan{2, 3, "a", 1}, ByteSpan{3, 5, "a", 1}, true},  // trailing zero-width skipped
		{TokenSpan{3, 5, "a", 1}, ByteSpan{6, 9, "a", 1}, true},  // both ends
		{TokenSpan{0, 0, "a", 1}, ByteSpan{}, false},             // only a special
		{TokenSpan{5, 5, "a", 1}, ByteSpan{}, false},             // end special
		{TokenSpan{4, 99, "a", 1}, ByteSpan{6, 9, "a", 1}, true}, // past the end clamps
	}
	for _, tc := range tests {
		got, ok := ToBytes(tc.ts, offsets)
		if ok != tc.ok || got != tc.want {
			t.Errorf("ToBytes(%v) = %v %v, want %v %v", tc.ts, got, ok, tc.want, tc.ok)
		}
	}
}

func TestMergeSpans(t *testing.T) {
	tests := []struct {
		name string
		in   []ByteSpan
		want []ByteSpan
	}{
		{"empty", nil, nil},
		{"disjoint sorted", []ByteSpan{{5, 6, "b", 1}, {0, 2, "a", 1}}, []ByteSpan{{0, 2, "a", 1}, {5, 6, "b", 1}}},
		{"overlap keeps first label and max score", []ByteSpan{{0, 5, "a", 0.2}, {3, 8, "b", 0.9}}, []ByteSpan{{0, 8, "a", 0.9}}},
		{"touching same label merge", []ByteSpan{{0, 3, "a", 0.5}, {3, 6, "a", 0.7}}, []ByteSpan{{0, 6, "a", 0.7}}},
		{"touching different labels stay", []ByteSpan{{0, 3, "a", 1}, {3, 6, "b", 1}}, []ByteSpan{{0, 3, "a", 1}, {3, 6, "b", 1}}},
		{"nested", []ByteSpan{{0, 10, "a", 0.1}, {2, 3, "b", 0.3}}, []ByteSpan{{0, 10, "a", 0.3}}},
		{"duplicates from window overlap", []ByteSpan{{4, 9, "e", 0.8}, {4, 9, "e", 0.9}}, []ByteSpan{{4, 9, "e", 0.9}}},
		{"equal start, label order", []ByteSpan{{0, 4, "b", 1}, {0, 4, "a", 1}}, []ByteSpan{{0, 4, "a", 1}}},
	}
	for _, tc := range tests {
		got := MergeSpans(tc.in)
		if len(got) != len(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
			}
		}
	}
}

// TestApplySpansEdges is Heimdall's apply_spans list, through redact.Apply.
func TestApplySpansEdges(t *testing.T) {
	f := func(s, e int, c string) redact.Finding { return redact.Finding{Start: s, End: e, Category: c} }
	tests := []struct {
		name, text string
		spans      []redact.Finding
		want       string
	}{
		{"one span", "mail a@b.c now", []redact.Finding{f(5, 10, "private_email")}, "mail [REDACTED:private_email] now"},
		{"overlap is unioned", "abcdefgh", []redact.Finding{f(1, 4, "x"), f(3, 6, "y")}, "a[REDACTED:x]gh"},
		{"zero length skipped", "abc", []redact.Finding{f(1, 1, "x")}, "abc"},
		{"past the end skipped", "abc", []redact.Finding{f(1, 9, "x")}, "abc"},
		{"not a char boundary skipped", "héllo", []redact.Finding{f(2, 4, "x")}, "héllo"},
		{"out of order sorted", "a1b2c", []redact.Finding{f(3, 4, "y"), f(1, 2, "x")}, "a[REDACTED:x]b[REDACTED:y]c"},
		{"empty input", "", []redact.Finding{f(0, 1, "x")}, ""},
		{"no spans", "plain", nil, "plain"},
	}
	for _, tc := range tests {
		if got := redact.Apply(tc.text, tc.spans); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
