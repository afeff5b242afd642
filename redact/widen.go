package redact

// Widen returns spans made safe to redact: each span is clamped to text
// and moved outward to the nearest UTF-8 character boundaries (out of a
// multi-byte character it cuts), so [Apply] replaces every non-empty span
// instead of skipping it. Empty and reversed spans are dropped. The result
// is a new slice.
//
// [Apply] keeps the privacy filter's apply_spans rule of skipping a span
// that cuts a character; a redactor must not let that rule emit a found
// secret raw, so [Rules], [NewWriter] and [Redact] widen first.
func Widen(text string, spans []Finding) []Finding {
	out := make([]Finding, 0, len(spans))
	for _, s := range spans {
		s.Start = max(s.Start, 0)
		s.End = min(s.End, len(text))
		if s.End <= s.Start {
			continue
		}
		for !boundary(text, s.Start) {
			s.Start--
		}
		for !boundary(text, s.End) {
			s.End++
		}
		out = append(out, s)
	}
	return out
}

// Redact returns text with every span of spans replaced by its [Marker]
// after [Widen]: unlike [Apply] it never leaves a span's bytes in place
// because the span was off a character boundary or ran past the end.
func Redact(text string, spans []Finding) string {
	return Apply(text, Widen(text, spans))
}
