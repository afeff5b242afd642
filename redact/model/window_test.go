package model

import (
	"strings"
	"testing"
)

func TestOverlap(t *testing.T) {
	for _, tc := range []struct{ limit, want int }{{3, 1}, {4, 1}, {5, 2}, {32, 15}, {512, 255}, {513, 256}, {128000, 256}} {
		if got := Overlap(tc.limit); got != tc.want {
			t.Errorf("Overlap(%d) = %d, want %d", tc.limit, got, tc.want)
		}
	}
}

func TestPlanWindows(t *testing.T) {
	tests := []struct {
		n, limit int
		want     []Window
	}{
		{0, 32, nil},
		{1, 32, []Window{{0, 1}}},
		{32, 32, []Window{{0, 32}}},
		{33, 32, []Window{{0, 32}, {17, 33}}},
		{10, 4, []Window{{0, 4}, {3, 7}, {6, 10}}},
		{5, 3, []Window{{0, 3}, {2, 5}}},
	}
	for _, tc := range tests {
		got, err := PlanWindows(tc.n, tc.limit)
		if err != nil || len(got) != len(tc.want) {
			t.Errorf("PlanWindows(%d, %d) = %v %v, want %v", tc.n, tc.limit, got, err, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("PlanWindows(%d, %d) = %v, want %v", tc.n, tc.limit, got, tc.want)
				break
			}
		}
	}
	for _, limit := range []int{-1, 0, 1, 2} {
		if _, err := PlanWindows(10, limit); err == nil || !strings.Contains(err.Error(), "at least 3") {
			t.Errorf("limit %d: %v", limit, err)
		}
	}
}

// TestPlanWindowsProperties checks coverage, the overlap and forward
// progress for every length and limit in a range.
func TestPlanWindowsProperties(t *testing.T) {
	for limit := 3; limit <= 40; limit++ {
		for n := 1; n <= 300; n++ {
			checkPlan(t, n, limit)
		}
	}
	checkPlan(t, 1_000_000, 128000)
	checkPlan(t, 100_000, 600)
}

func checkPlan(t *testing.T, n, limit int) {
	t.Helper()
	ws, err := PlanWindows(n, limit)
	if err != nil {
		t.Fatalf("PlanWindows(%d, %d): %v", n, limit, err)
	}
	if ws[0].Start != 0 || ws[len(ws)-1].End != n {
		t.Fatalf("n=%d limit=%d: windows %v do not span [0,%d)", n, limit, ws, n)
	}
	for i, w := range ws {
		if w.End-w.Start > limit || w.End <= w.Start {
			t.Fatalf("n=%d limit=%d: window %v", n, limit, w)
		}
		if i == 0 {
			continue
		}
		prev := ws[i-1]
		if w.Start <= prev.Start {
			t.Fatalf("n=%d limit=%d: no forward progress at %v", n, limit, w)
		}
		if prev.End-w.Start != Overlap(limit) {
			t.Fatalf("n=%d limit=%d: %v and %v overlap by %d, want %d", n, limit, prev, w, prev.End-w.Start, Overlap(limit))
		}
		if prev.End-prev.Start != limit {
			t.Fatalf("n=%d limit=%d: window %v before the last is short", n, limit, prev)
		}
	}
}

func FuzzPlanWindows(f *testing.F) {
	f.Add(100, 32)
	f.Add(3, 3)
	f.Fuzz(func(t *testing.T, n, limit int) {
		if n < 1 || n > 200000 || limit < 3 || limit > 1<<20 {
			return
		}
		checkPlan(t, n, limit)
	})
}
