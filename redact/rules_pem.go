package redact

import "strings"

// findPEM reports each PEM private key block (RSA, EC, DSA, OpenSSH,
// PKCS#8, encrypted, PGP): from "-----BEGIN ...PRIVATE KEY-----" to the
// matching END marker. The END may sit on the same line, as in the
// escaped "private_key" of a GCP service-account JSON. A block whose END
// is missing covers the header and the body lines that follow it: known
// RFC 1421 / OpenPGP headers ("Proc-Type: ...") right after BEGIN, then
// base64 lines, with blank lines inside it only where base64 follows; if
// those run to the end of the text, or the text ends in an unfinished
// line, the span runs to the end too, so a stream writer holds it back
// until the block ends. Certificates and public keys are not secrets and
// are left alone.
//
// The scan is linear in the text: a BEGIN line's label is looked for in
// the 69 bytes after it only, the end of a line is found once however many
// BEGIN markers it holds (lineEnds), and every block's scan ends at or
// before where the next search starts, but for the one line that stops it.
func findPEM(sc *scan, add func(int, int)) {
	text := sc.text
	le := lineEnds{text: text}
	const begin = "-----BEGIN "
	for off := 0; ; {
		i := strings.Index(text[off:], begin)
		if i < 0 {
			return
		}
		start := off + i
		hdrEnd := pemHeaderEnd(text, start+len(begin))
		if hdrEnd < 0 {
			off = start + len(begin)
			continue
		}
		end := pemBlockEnd(text, hdrEnd, &le)
		add(start, end)
		off = max(end, hdrEnd)
	}
}

// lineEnds finds the end of the line around an offset, remembering the
// last answer: offsets that rise within one line cost one search in all.
type lineEnds struct {
	text     string
	from, to int // no newline in text[from:to]; to is a newline or the end
	known    bool
}

// at returns the offset of the first newline at or after pos, or the
// text's length.
func (l *lineEnds) at(pos int) int {
	if l.known && pos >= l.from && pos <= l.to {
		return l.to
	}
	to := len(l.text)
	if nl := strings.IndexByte(l.text[pos:], '\n'); nl >= 0 {
		to = pos + nl
	}
	l.from, l.to, l.known = pos, to, true
	return to
}

// pemHeaderEnd returns the offset after the closing "-----" of a BEGIN
// line whose label names a private key, or -1.
func pemHeaderEnd(text string, labelStart int) int {
	// A label is at most 64 bytes: look no further than its closing dashes.
	line := text[labelStart:min(len(text), labelStart+64+len("-----"))]
	if nl := strings.IndexByte(line, '\n'); nl >= 0 {
		line = line[:nl]
	}
	j := strings.Index(line, "-----")
	if j < 0 || j > 64 {
		return -1
	}
	label := line[:j]
	if !strings.Contains(label, "PRIVATE KEY") {
		return -1
	}
	for k := 0; k < len(label); k++ {
		if c := label[k]; !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == ' ') {
			return -1
		}
	}
	return labelStart + j + len("-----")
}

// pemBlockEnd returns where the block that starts its body at body ends.
func pemBlockEnd(text string, body int, le *lineEnds) int {
	const endMark = "-----END "
	// The rest of the header's own line: an escaped one-line block.
	lineEnd := le.at(body)
	if k := strings.Index(text[body:lineEnd], endMark); k >= 0 {
		return closeEndMark(text, body+k+len(endMark), lineEnd)
	}
	last := lineEnd // end of the last line that belongs to the block
	headers := true // still right after BEGIN, where RFC 1421 headers sit
	for pos := lineEnd; pos < len(text); {
		pos++ // skip the newline
		next := le.at(pos)
		line := strings.TrimSpace(text[pos:next])
		if strings.HasPrefix(line, endMark) {
			lead := strings.Index(text[pos:next], endMark)
			return closeEndMark(text, pos+lead+len(endMark), next)
		}
		if next == len(text) {
			// The last line is unfinished: whatever it becomes, the block
			// may go on, so it runs to the end (a stream holds it back).
			return len(text)
		}
		switch {
		case headers && pemHeaderLine(line):
			last = next
		case line == "":
			// A blank line belongs to the block only if base64 follows.
			headers = false
		case pemBodyLine(line):
			headers = false
			last = next
		default:
			return last
		}
		pos = next
	}
	return len(text)
}

// closeEndMark returns the offset after the "-----" that closes an END
// marker whose label starts at from, within its line; the end of the line
// if the marker is unterminated.
func closeEndMark(text string, from, lineEnd int) int {
	if k := strings.Index(text[from:lineEnd], "-----"); k >= 0 {
		return from + k + len("-----")
	}
	return lineEnd
}

// pemHeaders are the header names that may follow a BEGIN line: RFC 1421
// encapsulated headers and OpenPGP armor headers, matched ignoring case.
var pemHeaders = []string{
	"Proc-Type", "DEK-Info", "Content-Domain", "Originator-ID-Asymmetric",
	"Originator-ID-Symmetric", "Originator-Certificate", "Issuer-Certificate",
	"MIC-Info", "Key-Info", "Recipient-ID-Asymmetric", "Recipient-ID-Symmetric",
	"CRL", "Version", "Comment", "Hash", "Charset", "MessageID",
}

// pemHeaderLine reports whether a trimmed line is a known PEM header,
// such as "Proc-Type: 4,ENCRYPTED".
func pemHeaderLine(line string) bool {
	k := strings.IndexByte(line, ':')
	if k <= 0 {
		return false
	}
	for _, h := range pemHeaders {
		if strings.EqualFold(line[:k], h) {
			return true
		}
	}
	return false
}

// pemBodyLine reports whether a trimmed, non-blank line can be a PEM
// block's body: base64.
func pemBodyLine(line string) bool {
	for i := 0; i < len(line); i++ {
		c := line[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=') {
			return false
		}
	}
	return true
}
