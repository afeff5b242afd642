package model

import (
	"math"
	"math/rand"
	"testing"
)

func publishedLabels(t testing.TB) []Label {
	t.Helper()
	cfg, err := ParseConfig(fixtureConfig(0))
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Labels
}

// legal is the BIOES transition rule, written independently of transition.
func legal(from, to Label) bool {
	switch {
	case from.Tag == TagO || from.Tag == TagE || from.Tag == TagS:
		return to.Tag == TagO || to.Tag == TagB || to.Tag == TagS
	default: // B or I
		return (to.Tag == TagI || to.Tag == TagE) && to.Category == from.Category
	}
}

func TestTransitionLegality(t *testing.T) {
	labels := publishedLabels(t)
	d := NewDecoder(labels, Biases{})
	allowed := 0
	for i, from := range labels {
		for j, to := range labels {
			if d.Allowed(i, j) != legal(from, to) {
				t.Errorf("%s -> %s: allowed %v, want %v", from, to, d.Allowed(i, j), legal(from, to))
			}
			if d.Allowed(i, j) {
				allowed++
			}
		}
	}
	// O, 8 E and 8 S go to O, 8 B, 8 S (17 each); 8 B and 8 I go to 2 each.
	if want := 17*17 + 16*2; allowed != want {
		t.Errorf("%d legal transitions, want %d", allowed, want)
	}
	for i, l := range labels {
		if d.start[i] != (l.Tag == TagO || l.Tag == TagB || l.Tag == TagS) {
			t.Errorf("%s may start: %v", l, d.start[i])
		}
	}
}

func TestTransitionBiases(t *testing.T) {
	O := Label{}
	B := Label{TagB, "secret"}
	I := Label{TagI, "secret"}
	E := Label{TagE, "secret"}
	S := Label{TagS, "secret"}
	S2 := Label{TagS, "private_email"}
	b := Biases{BackgroundStay: 1, BackgroundToStart: 2, InsideToContinue: 3, InsideToEnd: 4, EndToBackground: 5, EndToStart: 6}
	for _, tc := range []struct {
		from, to Label
		want     float64
	}{
		{O, O, 1}, {O, B, 2}, {O, S, 2}, {B, I, 3}, {I, I, 3}, {B, E, 4}, {I, E, 4},
		{E, O, 5}, {S, O, 5}, {E, B, 6}, {S, S2, 6}, {E, S, 6},
		{O, I, math.Inf(-1)}, {O, E, math.Inf(-1)}, {B, O, math.Inf(-1)}, {B, B, math.Inf(-1)},
		{I, Label{TagI, "other"}, math.Inf(-1)}, {E, I, math.Inf(-1)}, {S, E, math.Inf(-1)},
	} {
		if got := transition(tc.from, tc.to, b); got != tc.want {
			t.Errorf("%s -> %s = %v, want %v", tc.from, tc.to, got, tc.want)
		}
	}
}

// smallLabels is one category: O, B, I, E, S.
var smallLabels = []Label{{}, {TagB, "x"}, {TagI, "x"}, {TagE, "x"}, {TagS, "x"}}

// bruteForce returns the best legal path by trying every one, ties to the
// lexicographically smallest (as Decode's lower-index rule gives).
func bruteForce(d *Decoder, logits [][]float32) ([]int, float64) {
	T, C := len(logits), len(d.labels)
	best := math.Inf(-1)
	var bestPath []int
	path := make([]int, T)
	var rec func(t int, score float64)
	rec = func(t int, score float64) {
		if t == T {
			if score > best {
				best = score
				bestPath = append([]int(nil), path...)
			}
			return
		}
		for c := 0; c < C; c++ {
			s := score + float64(logits[t][c])
			if t == 0 {
				if !d.start[c] {
					continue
				}
			} else {
				s += d.trans[path[t-1]][c]
			}
			if math.IsInf(s, -1) {
				continue
			}
			path[t] = c
			rec(t+1, s)
		}
	}
	rec(0, 0)
	return bestPath, best
}

func pathScore(d *Decoder, logits [][]float32, path []int) float64 {
	s := 0.0
	for t, c := range path {
		s += float64(logits[t][c])
		if t > 0 {
			s += d.trans[path[t-1]][c]
		}
	}
	return s
}

func TestDecodeMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for _, b := range []Biases{{}, {BackgroundStay: 0.5, BackgroundToStart: -1, InsideToContinue: 0.3, InsideToEnd: -0.2, EndToBackground: 0.1, EndToStart: -2}} {
		d := NewDecoder(smallLabels, b)
		for trial := 0; trial < 400; trial++ {
			T := 1 + rng.Intn(6)
			logits := make([][]float32, T)
			for i := range logits {
				logits[i] = make([]float32, len(smallLabels))
				for c := range logits[i] {
					logits[i][c] = float32(rng.NormFloat64() * 3)
				}
			}
			got := d.Decode(logits)
			want, best := bruteForce(d, logits)
			if math.Abs(pathScore(d, logits, got)-best) > 1e-9 {
				t.Fatalf("logits %v: Decode %v (score %v), brute force %v (score %v)", logits, got, pathScore(d, logits, got), want, best)
			}
		}
	}
}

func TestDecodeCases(t *testing.T) {
	d := NewDecoder(smallLabels, Biases{})
	row := func(vals ...float32) []float32 { return vals }
	tests := []struct {
		name   string
		logits [][]float32
		want   []int
	}{
		{"background", [][]float32{row(5, 0, 0, 0, 0), row(5, 0, 0, 0, 0)}, []int{0, 0}},
		{"single", [][]float32{row(5, 0, 0, 0, 0), row(0, 0, 0, 0, 5)}, []int{0, 4}},
		{"B I E", [][]float32{row(0, 5, 0, 0, 0), row(0, 0, 5, 0, 0), row(0, 0, 0, 5, 0)}, []int{1, 2, 3}},
		// I cannot start a path: the greedy reading I, E is not legal and
		// B, E (5) beats O, O (2).
		{"no start with I", [][]float32{row(1, 0, 5, 0, 0), row(1, 0, 0, 5, 0)}, []int{1, 3}},
		{"no start with E", [][]float32{row(1, 0, 0, 5, 0)}, []int{0}},
		// B then O is illegal; B I E or O O O wins by the sums.
		{"B must close", [][]float32{row(0, 5, 0, 0, 0), row(3, 0, 2, 0, 0), row(0, 0, 0, 3, 0)}, []int{1, 2, 3}},
		{"empty", nil, nil},
	}
	for _, tc := range tests {
		got := d.Decode(tc.logits)
		if !equalInts(got, tc.want) {
			t.Errorf("%s: Decode = %v, want %v", tc.name, got, tc.want)
		}
	}
	// The biases move the decision: a dearer background tips O,O to O,S.
	logits := [][]float32{row(1, 0, 0, 0, 0), row(1, 0, 0, 0, 0.8)}
	if got := d.Decode(logits); !equalInts(got, []int{0, 0}) {
		t.Errorf("unbiased: %v", got)
	}
	eager := NewDecoder(smallLabels, Biases{BackgroundStay: -1})
	if got := eager.Decode(logits); !equalInts(got, []int{0, 4}) {
		t.Errorf("background_stay -1: %v, want [0 4]", got)
	}
	// No legal path (no label may start one): nil.
	if got := NewDecoder([]Label{{TagI, "a"}, {TagE, "a"}}, Biases{}).Decode([][]float32{row(0, 0)}); got != nil {
		t.Errorf("no legal path: %v", got)
	}
}

func FuzzViterbi(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	d := NewDecoder(smallLabels, Biases{InsideToEnd: 0.5})
	f.Fuzz(func(t *testing.T, data []byte) {
		T := len(data) / len(smallLabels)
		if T == 0 || T > 6 {
			return
		}
		logits := make([][]float32, T)
		for i := range logits {
			logits[i] = make([]float32, len(smallLabels))
			for c := range logits[i] {
				logits[i][c] = float32(int8(data[i*len(smallLabels)+c])) / 8
			}
		}
		got := d.Decode(logits)
		_, best := bruteForce(d, logits)
		if math.Abs(pathScore(d, logits, got)-best) > 1e-9 {
			t.Fatalf("Decode %v scores %v, best %v", got, pathScore(d, logits, got), best)
		}
		for i := 1; i < len(got); i++ {
			if !d.Allowed(got[i-1], got[i]) {
				t.Fatalf("illegal step %v", got)
			}
		}
	})
}
