//go:build linux

package escape_test

import (
	"slices"
	"testing"
)

// attack runs one attack paired with its positive control, as subtest name.
// probe runs the attack, under the guarantee (lifted false) or with the
// guarantee lifted (lifted true: a setting removed, a grant added), and
// returns what it saw; blocked says whether that shows the attack failed.
// The test fails if the attack gets through under the guarantee, and also
// if it is blocked with the guarantee lifted: a control that cannot succeed
// means the probe is broken, and a broken probe would pass any guarantee.
func attack[R any](t *testing.T, name string, probe func(t *testing.T, lifted bool) R, blocked func(R) bool) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		t.Helper()
		held := probe(t, false)
		lifted := probe(t, true)
		for _, f := range pairFailures(blocked(held), blocked(lifted)) {
			r := held
			if f == controlBlocked {
				r = lifted
			}
			t.Errorf("%s:\n%v", f, r)
		}
	})
}

// The ways an attack and its control can fail.
const (
	attackThrough  = "attack: got through the guarantee"
	controlBlocked = "control: with the guarantee lifted the same probe should get through, or this test could not fail"
)

// pairFailures says what is wrong with an attack whose probe was blocked
// (or not) under the guarantee and with it lifted: nothing only when the
// guarantee blocked it and lifting the guarantee let it through.
func pairFailures(blockedHeld, blockedLifted bool) []string {
	var f []string
	if !blockedHeld {
		f = append(f, attackThrough)
	}
	if blockedLifted {
		f = append(f, controlBlocked)
	}
	return f
}

// TestAttackPairFails checks attack's verdict: it fails when the attack
// gets through and when the control is blocked, and only then.
func TestAttackPairFails(t *testing.T) {
	for _, tc := range []struct {
		name                       string
		blockedHeld, blockedLifted bool
		want                       []string
	}{
		{"attack blocked, control through", true, false, nil},
		{"attack through", false, false, []string{attackThrough}},
		{"control blocked too", true, true, []string{controlBlocked}},
		{"both wrong", false, true, []string{attackThrough, controlBlocked}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := pairFailures(tc.blockedHeld, tc.blockedLifted); !slices.Equal(got, tc.want) {
				t.Fatalf("pairFailures(%v, %v) = %q; want %q", tc.blockedHeld, tc.blockedLifted, got, tc.want)
			}
		})
	}
}
