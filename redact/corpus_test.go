package redact

import (
	"os"
	"sort"
	"strings"
	"testing"
)

// labelledSpan is a span the corpus marks as one to redact.
type labelledSpan struct {
	Finding
	value string
}

// loadCorpus reads testdata/corpus.txt (made by testdata/gen_corpus.py)
// and returns the raw text and its labelled spans. A label reads
// ⟦category:value⟧; the value may span lines.
func loadCorpus(t testing.TB) (string, []labelledSpan) {
	t.Helper()
	b, err := os.ReadFile("testdata/corpus.txt")
	if err != nil {
		t.Fatal(err)
	}
	return parseLabels(t, string(b))
}

func parseLabels(t testing.TB, src string) (string, []labelledSpan) {
	t.Helper()
	const open, close = "⟦", "⟧"
	var raw strings.Builder
	var spans []labelledSpan
	for {
		i := strings.Index(src, open)
		if i < 0 {
			raw.WriteString(src)
			break
		}
		raw.WriteString(src[:i])
		src = src[i+len(open):]
		j := strings.Index(src, close)
		colon := strings.IndexByte(src, ':')
		if j < 0 || colon < 0 || colon > j {
			t.Fatalf("corpus: bad label near %q", src[:min(len(src), 40)])
		}
		cat, val := src[:colon], src[colon+1:j]
		start := raw.Len()
		raw.WriteString(val)
		spans = append(spans, labelledSpan{Finding{Start: start, End: raw.Len(), Category: cat}, val})
		src = src[j+len(close):]
	}
	return raw.String(), spans
}

// corpusScore is what a detector achieved on a labelled text.
type corpusScore struct {
	// per category of the labels: how many there are and how many were
	// fully covered (nothing of the value survives).
	labels, covered map[string]int
	// coveredSameCat counts labels covered by findings of their category.
	coveredSameCat map[string]int
	// tp and fp count normalized findings that do or do not overlap a label.
	tp, fp  int
	missed  []labelledSpan
	falsePo []Finding
}

func scoreCorpus(text string, want []labelledSpan, got []Finding) corpusScore {
	sc := corpusScore{labels: map[string]int{}, covered: map[string]int{}, coveredSameCat: map[string]int{}}
	norm := Normalize(text, got)
	for _, w := range want {
		sc.labels[w.Category]++
		if coveredBy(w.Finding, norm) {
			sc.covered[w.Category]++
			var same []Finding
			for _, g := range got {
				if g.Category == w.Category {
					same = append(same, g)
				}
			}
			if coveredBy(w.Finding, Normalize(text, same)) {
				sc.coveredSameCat[w.Category]++
			}
		} else {
			sc.missed = append(sc.missed, w)
		}
	}
	for _, g := range norm {
		hit := false
		for _, w := range want {
			if g.Start < w.End && w.Start < g.End {
				hit = true
				break
			}
		}
		if hit {
			sc.tp++
		} else {
			sc.fp++
			sc.falsePo = append(sc.falsePo, g)
		}
	}
	return sc
}

// coveredBy reports whether the sorted, disjoint spans cover every byte of w.
func coveredBy(w Finding, spans []Finding) bool {
	pos := w.Start
	for _, s := range spans {
		if s.Start <= pos && s.End > pos {
			pos = s.End
		}
		if pos >= w.End {
			return true
		}
	}
	return pos >= w.End
}

// TestCorpusPrecisionRecall measures the rules engine on the labelled
// corpus: recall (labels whose every byte is redacted) per category, and
// precision (redacted spans that overlap a label). Targets: recall >= 0.95
// on secrets and on all labels, precision >= 0.95.
func TestCorpusPrecisionRecall(t *testing.T) {
	text, want := loadCorpus(t)
	if n := strings.Count(text, "\n") + 1; n < 200 {
		t.Fatalf("corpus has %d lines, want at least 200", n)
	}
	got, err := NewRules().Detect(text)
	if err != nil {
		t.Fatal(err)
	}
	sc := scoreCorpus(text, want, got)
	cats := make([]string, 0, len(sc.labels))
	for c := range sc.labels {
		cats = append(cats, c)
	}
	sort.Strings(cats)
	total, covered := 0, 0
	for _, c := range cats {
		total += sc.labels[c]
		covered += sc.covered[c]
		t.Logf("recall %-15s %3d/%3d = %.3f (same category %.3f)", c, sc.covered[c], sc.labels[c],
			ratio(sc.covered[c], sc.labels[c]), ratio(sc.coveredSameCat[c], sc.labels[c]))
	}
	precision := ratio(sc.tp, sc.tp+sc.fp)
	t.Logf("recall all %d/%d = %.3f; precision %d/%d = %.3f; corpus %d lines, %d bytes, %d labels",
		covered, total, ratio(covered, total), sc.tp, sc.tp+sc.fp, precision, strings.Count(text, "\n")+1, len(text), len(want))
	for _, m := range sc.missed {
		t.Logf("missed %s: %q", m.Category, m.value)
	}
	for _, f := range sc.falsePo {
		t.Logf("false positive %s (%s): %q", f.Category, f.Rule, text[f.Start:f.End])
	}
	if r := ratio(sc.covered[CategorySecret], sc.labels[CategorySecret]); r < 0.95 {
		t.Errorf("secret recall %.3f < 0.95", r)
	}
	if r := ratio(covered, total); r < 0.95 {
		t.Errorf("overall recall %.3f < 0.95", r)
	}
	if precision < 0.95 {
		t.Errorf("precision %.3f < 0.95", precision)
	}
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}
