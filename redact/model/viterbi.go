package model

import "math"

// Decoder finds the best BIOES label path through a window's logits: the
// sum of each token's logit for its label plus the calibrated bias of each
// transition taken, over legal transitions only. The zero value is not
// usable; use [NewDecoder].
type Decoder struct {
	labels []Label
	trans  [][]float64 // [from][to]; -Inf where illegal
	start  []bool      // labels a path may begin with
	preds  [][]int32   // for each label, the labels that may precede it
}

// NewDecoder builds the transition table for labels with the biases:
//
//	O -> O                     background stay
//	O -> B-*, S-*              background to start
//	B-x, I-x -> I-x            inside to continue
//	B-x, I-x -> E-x            inside to end
//	E-*, S-* -> O              end to background
//	E-*, S-* -> B-*, S-*       end to start
//
// Every other transition is forbidden. A path begins with O, B or S.
func NewDecoder(labels []Label, b Biases) *Decoder {
	n := len(labels)
	d := &Decoder{labels: labels, trans: make([][]float64, n), start: make([]bool, n)}
	for i, from := range labels {
		d.trans[i] = make([]float64, n)
		d.start[i] = from.Tag == TagO || from.Tag == TagB || from.Tag == TagS
		for j, to := range labels {
			d.trans[i][j] = transition(from, to, b)
		}
	}
	d.preds = make([][]int32, n)
	for j := range labels {
		for i := range labels {
			if !math.IsInf(d.trans[i][j], -1) {
				d.preds[j] = append(d.preds[j], int32(i))
			}
		}
	}
	return d
}

// Allowed reports whether the decoder may go from label index i to j.
func (d *Decoder) Allowed(i, j int) bool { return !math.IsInf(d.trans[i][j], -1) }

func transition(from, to Label, b Biases) float64 {
	opens := to.Tag == TagB || to.Tag == TagS
	switch from.Tag {
	case TagO:
		switch {
		case to.Tag == TagO:
			return b.BackgroundStay
		case opens:
			return b.BackgroundToStart
		}
	case TagB, TagI:
		if to.Category == from.Category {
			switch to.Tag {
			case TagI:
				return b.InsideToContinue
			case TagE:
				return b.InsideToEnd
			}
		}
	case TagE, TagS:
		switch {
		case to.Tag == TagO:
			return b.EndToBackground
		case opens:
			return b.EndToStart
		}
	}
	return math.Inf(-1)
}

// Decode returns the best label index per token; logits[t] holds one score
// per label. Ties go to the lower label index. With no legal path (labels
// lacking O and S for a single token) it returns nil.
func (d *Decoder) Decode(logits [][]float32) []int {
	T, C := len(logits), len(d.labels)
	if T == 0 {
		return nil
	}
	score := make([]float64, C)
	next := make([]float64, C)
	back := make([]int32, T*C) // back[t*C+j]: best predecessor of j at t
	for c := 0; c < C; c++ {
		score[c] = math.Inf(-1)
		if d.start[c] && c < len(logits[0]) {
			score[c] = float64(logits[0][c])
		}
	}
	for t := 1; t < T; t++ {
		for j := 0; j < C; j++ {
			best, arg := math.Inf(-1), int32(-1)
			for _, i := range d.preds[j] { // ascending, so ties keep the lower index
				if s := score[i] + d.trans[i][j]; s > best {
					best, arg = s, i
				}
			}
			if arg >= 0 && j < len(logits[t]) {
				best += float64(logits[t][j])
			} else {
				best = math.Inf(-1)
			}
			next[j], back[t*C+j] = best, arg
		}
		score, next = next, score
	}
	best, arg := math.Inf(-1), -1
	for c := 0; c < C; c++ {
		if score[c] > best {
			best, arg = score[c], c
		}
	}
	if arg < 0 {
		return nil
	}
	path := make([]int, T)
	path[T-1] = arg
	for t := T - 1; t > 0; t-- {
		path[t-1] = int(back[t*C+path[t]])
	}
	return path
}
