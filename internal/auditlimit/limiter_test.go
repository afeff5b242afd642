package auditlimit

import (
	"fmt"
	"testing"
	"time"
)

func size100() int { return 100 }

// TestLimitPerKey: the first PerKey decisions of a key are written, the
// next ones counted, and one Flush reports the exact count, per key.
func TestLimitPerKey(t *testing.T) {
	for _, tc := range []struct {
		name          string
		perKey, n     int
		wantW, wantC  int
		wantAggregate int64
	}{
		{"one under", 5, 4, 4, 0, 0},
		{"at the bound", 5, 5, 5, 0, 0},
		{"one past", 5, 6, 5, 1, 1},
		{"flood", 5, 100000, 5, 99995, 99995},
		{"perKey 1, flood", 1, 1000, 1, 999, 999},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := New(Limits{PerKey: tc.perKey})
			k := NewKey(false, "http", "denied.test", 80, "", "host not in allow-list")
			other := NewKey(false, "http", "other.test", 80, "", "host not in allow-list")
			var w, c int
			for range tc.n {
				switch l.Admit(k, time.Now(), size100) {
				case Write:
					w++
				case Count:
					c++
				default:
					t.Fatal("refused")
				}
			}
			if l.Admit(other, time.Now(), size100) != Write {
				t.Error("a distinct key is not written")
			}
			if w != tc.wantW || c != tc.wantC {
				t.Errorf("written %d, counted %d; want %d, %d", w, c, tc.wantW, tc.wantC)
			}
			aggs := l.Flush(func(Aggregate) int { return 120 })
			var got int64
			for _, a := range aggs {
				if a.Key != k {
					t.Errorf("aggregate of %+v", a.Key)
				}
				got += a.Count
			}
			if got != tc.wantAggregate {
				t.Errorf("aggregated %d, want %d", got, tc.wantAggregate)
			}
			if again := l.Flush(func(Aggregate) int { return 120 }); again != nil {
				t.Errorf("second Flush: %+v", again)
			}
			if _, _, tr := l.Summary(); tr {
				t.Error("truncated")
			}
		})
	}
}

// TestLimitBytes: lines are written until MaxBytes less the reserve is
// spent, the log is then truncated exactly once, later refusals and
// repeats of recorded allowed keys are counted, and a new allowed key is
// refused. Summary holds every decision not written.
func TestLimitBytes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		lines  int // distinct refusals before the probe
		budget int64
		trunc  bool
	}{
		{"one line under", 9, 1000 + 2048, false},
		{"at the bound", 10, 1000 + 2048, false},
		{"one line past", 11, 1000 + 2048, true},
		{"far past", 500, 1000 + 2048, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := New(Limits{MaxBytes: tc.budget})
			allowed := NewKey(true, "connect", "allowed.test", 443, "192.0.2.1", "matches")
			if l.Admit(allowed, time.Now(), func() int { return 0 }) != Write {
				t.Fatal("first allowed line not written")
			}
			written := 0
			for i := range tc.lines {
				k := NewKey(false, "http", fmt.Sprintf("h%d.test", i), 80, "", "denied")
				if l.Admit(k, time.Now(), size100) == Write {
					written++
				}
			}
			if got := l.TakeTruncation(); got != tc.trunc {
				t.Fatalf("TakeTruncation %v, want %v (written %d)", got, tc.trunc, written)
			}
			if l.TakeTruncation() {
				t.Fatal("TakeTruncation true twice")
			}
			if l.Used() > tc.budget-DefaultReserve {
				t.Errorf("used %d of %d", l.Used(), tc.budget-DefaultReserve)
			}
			newAllowed := NewKey(true, "connect", "new.test", 443, "192.0.2.2", "matches")
			v := l.Admit(newAllowed, time.Now(), func() int { return 0 })
			if tc.trunc && v != Refuse || !tc.trunc && v != Write {
				t.Errorf("new allowed key: verdict %v", v)
			}
			if v := l.Admit(allowed, time.Now(), func() int { return 0 }); tc.trunc && v != Count {
				t.Errorf("recorded allowed key after truncation: verdict %v, want Count", v)
			}
			a, r, tr := l.Summary()
			if tr != tc.trunc {
				t.Fatalf("Summary truncated %v", tr)
			}
			if tc.trunc && (a != 1 || int(r) != tc.lines-written+1) {
				t.Errorf("Summary: %d allowed, %d refused not written; want 1, %d", a, r, tc.lines-written+1)
			}
		})
	}
}

// TestLimitFlushTruncates: aggregate lines are charged too; one that does
// not fit truncates the log and its count goes to Summary.
func TestLimitFlushTruncates(t *testing.T) {
	l := New(Limits{MaxBytes: 2048 + 350, PerKey: 1})
	k := NewKey(false, "http", "a.test", 80, "", "denied")
	for range 10 {
		l.Admit(k, time.Now(), size100)
	}
	aggs := l.Flush(func(Aggregate) int { return 300 })
	if aggs != nil || !l.TakeTruncation() {
		t.Fatalf("aggregates %+v, truncation not reported", aggs)
	}
	if _, r, _ := l.Summary(); r != 9 {
		t.Errorf("Summary: %d refused, want 9", r)
	}
}

// TestLimitKeys: keys past MaxKeys are written but not remembered, so the
// key map stays bounded.
func TestLimitKeys(t *testing.T) {
	l := New(Limits{MaxKeys: 3, PerKey: 1})
	for i := range 10 {
		k := NewKey(false, "", fmt.Sprint(i), 0, "", "")
		if l.Admit(k, time.Now(), size100) != Write {
			t.Fatalf("key %d not written", i)
		}
	}
	if len(l.keys) != 3 {
		t.Errorf("%d keys remembered", len(l.keys))
	}
	long := string(make([]byte, 10000))
	if k := NewKey(false, "", "", 0, "", long); len(k.Reason) != maxReasonKey {
		t.Errorf("reason of %d bytes kept", len(k.Reason))
	}
}
