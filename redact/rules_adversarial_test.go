package redact

import (
	"strings"
	"testing"
	"time"
)

// adversarialShapes are inputs built from the rules' own prefixes and
// delimiters, repeated, the way a sandbox would try to make the host's
// redactor slow: every position a candidate.
func adversarialShapes(n int) map[string]string {
	out := map[string]string{}
	for _, p := range []string{
		"AKIA", "aws", "awssecret=", "aws_sk: ", "AIza", "ghp_", "github_pat_", "glpat-", "xoxb-", "sk-ant-", "sk-",
		"eyJ", "authorization: bearer ", "https://hooks.slack.com/services/", "http://a:b@", "a@b.", "password=",
		"token=", "secret ", "api_key", `"password":"`, "1234 ", "4111-", "+1 (", "1.2.3.4.", "fe80::", "1:", "DE89",
		"-----BEGIN ", "-----BEGIN PRIVATE KEY-----", "\x1b[0m",
	} {
		out["repeat "+p] = strings.Repeat(p, n/len(p))
		out["repeat with token "+p] = strings.Repeat(p+"abcdefghij0123456789", n/(len(p)+20))
	}
	out["one word"] = strings.Repeat("a", n)
	out["digits"] = strings.Repeat("1", n)
	out["spaced digits"] = strings.Repeat("1 ", n/2)
	return out
}

// TestRulesAdversarialLinear: every rule's cost grows linearly on every
// adversarial shape: 8 times the input costs at most 40 times the time (on a loaded machine)
// (quadratic would be 64), and 1 MiB takes under 3 seconds however loaded
// the machine is (the slowest shape, "awssecret=", takes about 0.5 s).
func TestRulesAdversarialLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("timing test; -short skips it")
	}
	r := NewRules()
	timeOf := func(text string) time.Duration {
		start := time.Now()
		r.Detect(text)
		return time.Since(start)
	}
	// Rounds interleave the two sizes, so load that comes and goes on a
	// shared machine weighs on both; the best round counts (a super-linear
	// rule is super-linear in every round).
	measure := func(small, big string) (ts, tb time.Duration) {
		best := 1e18
		for range 5 {
			s, b := timeOf(small), timeOf(big)
			if ratio := float64(b) / float64(max(s, time.Microsecond)); ratio < best || ts == 0 {
				best, ts, tb = ratio, s, b
			}
		}
		return ts, tb
	}
	small, big := adversarialShapes(128<<10), adversarialShapes(1<<20)
	for name := range big {
		t.Run(name, func(t *testing.T) {
			ts, tb := measure(small[name], big[name])
			if tb > 3*time.Second {
				t.Errorf("1 MiB took %v", tb)
			}
			if tb > 40*ts && tb > 250*time.Millisecond {
				t.Errorf("128 KiB took %v, 1 MiB %v: super-linear", ts, tb)
			}
		})
	}
}
