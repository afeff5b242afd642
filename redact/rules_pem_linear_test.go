package redact

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func pemSpans(find func(*scan, func(int, int)), text string) [][2]int {
	var out [][2]int
	find(&scan{text: text}, func(s, e int) { out = append(out, [2]int{s, e}) })
	return out
}

const pemKey = "-----BEGIN RSA PRIVATE KEY-----"

// adversarialPEM are inputs that made the old scan quadratic or could make
// a linear one slip: one long line of BEGIN markers, with and without a
// valid label, with END markers, and many one-line blocks on one line.
func adversarialPEM(n int) map[string]string {
	return map[string]string{
		"bare BEGIN markers":         strings.Repeat("-----BEGIN ", n/11),
		"BEGIN and a long label":     strings.Repeat("-----BEGIN "+strings.Repeat("A", 70), n/81),
		"valid headers on one line":  strings.Repeat(pemKey, n/len(pemKey)),
		"one-line blocks, one line":  strings.Repeat(pemKey+"MIIE-----END RSA PRIVATE KEY-----", n/64),
		"headers with unclosed END":  strings.Repeat(pemKey+"-----END ", n/40),
		"BEGIN then spaces":          "-----BEGIN " + strings.Repeat(" ", n),
		"header line then body line": strings.Repeat(pemKey+"\n"+strings.Repeat("A", 64)+"\n", n/128) + "x",
		"many blank lines":           pemKey + "\n" + strings.Repeat("\n", n),
		"spaces before every BEGIN":  strings.Repeat(" \t-----BEGIN PRIVATE KEY-----\n"+strings.Repeat(" ", 200)+"\n", n/230),
	}
}

// TestPEMLinear: a 4 MiB line of each adversarial shape takes well under a
// second (the old scan took 33 s on the first), and the spans are those of
// the old scan wherever the old one finishes in reasonable time.
func TestPEMLinear(t *testing.T) {
	for name, text := range adversarialPEM(4 << 20) {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			pemSpans(findPEM, text)
			if d := time.Since(start); d > 500*time.Millisecond {
				t.Errorf("%d bytes took %v, want well under a second", len(text), d)
			}
		})
	}
	for name, text := range adversarialPEM(20 << 10) {
		t.Run(name+" same spans", func(t *testing.T) {
			if got, want := pemSpans(findPEM, text), pemSpans(oldFindPEM, text); !slices.Equal(got, want) {
				t.Errorf("spans differ from the old scan: got %d, want %d", len(got), len(want))
			}
		})
	}
}

// TestPEMLinearControl: the old scan is quadratic on the first shape (the
// test above would catch a return to it): doubling the input about
// quadruples its time, while the new scan's about doubles.
func TestPEMLinearControl(t *testing.T) {
	measure := func(find func(*scan, func(int, int)), n int) time.Duration {
		text := strings.Repeat("-----BEGIN ", n/11)
		best := time.Hour
		for range 3 {
			start := time.Now()
			pemSpans(find, text)
			best = min(best, time.Since(start))
		}
		return best
	}
	// Other work on the machine (test.sh runs suites side by side) can
	// slow one measure: the control gets three tries.
	var ratio float64
	for try := 0; try < 3 && ratio < 8; try++ {
		oldSmall, oldBig := measure(oldFindPEM, 64<<10), measure(oldFindPEM, 256<<10)
		ratio = float64(oldBig) / float64(oldSmall)
	}
	if ratio < 8 {
		t.Errorf("old scan: 4x the input cost %.1fx the time, want about 16x (is the control still quadratic?)", ratio)
	}
	newSmall, newBig := measure(findPEM, 256<<10), measure(findPEM, 1<<20)
	if ratio := float64(newBig) / float64(newSmall); ratio > 8 && newBig > 50*time.Millisecond {
		t.Errorf("new scan: 4x the input cost %.1fx the time, want about 4x", ratio)
	}
}

// FuzzPEMSameSpans: on small inputs the linear scan reports exactly the
// spans of the old one.
func FuzzPEMSameSpans(f *testing.F) {
	f.Add("-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\n")
	f.Add(`{"private_key":"-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n"}`)
	f.Add("-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: x\n\nMIIE\n\nabc")
	f.Add(pemKey + pemKey + "-----END X" + "\n-----BEGIN " + "-----BEGIN EC PRIVATE KEY-----")
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 1<<16 {
			return
		}
		if got, want := pemSpans(findPEM, text), pemSpans(oldFindPEM, text); !slices.Equal(got, want) {
			t.Fatalf("spans %v, the old scan %v", got, want)
		}
	})
}

// BenchmarkPEMAdversarial measures the scan on 1 MiB of each adversarial
// shape.
func BenchmarkPEMAdversarial(b *testing.B) {
	for name, text := range adversarialPEM(1 << 20) {
		b.Run(strings.ReplaceAll(name, " ", "-"), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for range b.N {
				pemSpans(findPEM, text)
			}
		})
	}
}
