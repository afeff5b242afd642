// Package size spells byte counts, the one place that does: exactly, the
// way moat's flags and config take them ("64M"), and for a person reading
// a message ("1.5 GiB"). It imports nothing of the module.
package size

import "strconv"

// Unlimited is how Format spells -1, the value that lifts a limit.
const Unlimited = "unlimited"

// Format is the shortest exact spelling of n that the flags read back:
// the largest binary suffix (T, G, M, K) that divides it, "unlimited"
// for -1, and plain digits otherwise.
func Format(n int64) string {
	if n == -1 {
		return Unlimited
	}
	if n > 0 {
		for _, u := range []struct {
			suffix string
			shift  uint
		}{{"T", 40}, {"G", 30}, {"M", 20}, {"K", 10}} {
			if n%(1<<u.shift) == 0 {
				return strconv.FormatInt(n>>u.shift, 10) + u.suffix
			}
		}
	}
	return strconv.FormatInt(n, 10)
}

// Human writes n in the largest binary unit that keeps it readable, with
// at most one decimal: "64 MiB", "1.5 GiB", "512 bytes".
func Human(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10) + " bytes"
	}
	v, u := float64(n), ""
	for _, unit := range []string{"KiB", "MiB", "GiB", "TiB"} {
		if v < 1024 {
			break
		}
		v /= 1024
		u = unit
	}
	if v == float64(int64(v)) {
		return strconv.FormatInt(int64(v), 10) + " " + u
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " " + u
}
