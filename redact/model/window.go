package model

import "fmt"

// Window is a run of token positions [Start, End) that the model sees at
// once. The zero value is the empty window at 0.
type Window struct {
	Start, End int
}

// Overlap returns how many tokens consecutive windows share for a token
// limit: min(256, (limit-1)/2).
func Overlap(limit int) int {
	return min(256, (limit-1)/2)
}

// PlanWindows covers n tokens with windows of at most limit tokens. A
// sequence that fits is one window; otherwise each window but the last is
// limit tokens long and the next one starts [Overlap] tokens before its
// end. A limit below 3 is refused, and so is a plan that would not move
// forward. Zero tokens give no windows.
func PlanWindows(n, limit int) ([]Window, error) {
	if limit < 3 {
		return nil, fmt.Errorf("privacy filter: token limit %d: want at least 3", limit)
	}
	if n <= 0 {
		return nil, nil
	}
	if n <= limit {
		return []Window{{0, n}}, nil
	}
	overlap := Overlap(limit)
	var out []Window
	for start := 0; ; {
		end := min(start+limit, n)
		out = append(out, Window{start, end})
		if end == n {
			return out, nil
		}
		next := end - overlap
		if next <= start {
			return nil, fmt.Errorf("privacy filter: windows of %d tokens overlapping by %d cannot make forward progress", limit, overlap)
		}
		start = next
	}
}
