// Code generated from the quadratic findPEM before it was made linear; the
// fuzz target compares the two. DO NOT EDIT.

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
func oldFindPEM(sc *scan, add func(int, int)) {
	text := sc.text
	const begin = "-----BEGIN "
	for off := 0; ; {
		i := strings.Index(text[off:], begin)
		if i < 0 {
			return
		}
		start := off + i
		hdrEnd := oldPemHeaderEnd(text, start+len(begin))
		if hdrEnd < 0 {
			off = start + len(begin)
			continue
		}
		end := oldPemBlockEnd(text, hdrEnd)
		add(start, end)
		off = max(end, hdrEnd)
	}
}

// pemHeaderEnd returns the offset after the closing "-----" of a BEGIN
// line whose label names a private key, or -1.
func oldPemHeaderEnd(text string, labelStart int) int {
	line := text[labelStart:]
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
func oldPemBlockEnd(text string, body int) int {
	const endMark = "-----END "
	// The rest of the header's own line: an escaped one-line block.
	lineEnd := len(text)
	if nl := strings.IndexByte(text[body:], '\n'); nl >= 0 {
		lineEnd = body + nl
	}
	if k := strings.Index(text[body:lineEnd], endMark); k >= 0 {
		return oldCloseEndMark(text, body+k+len(endMark), lineEnd)
	}
	last := lineEnd // end of the last line that belongs to the block
	headers := true // still right after BEGIN, where RFC 1421 headers sit
	for pos := lineEnd; pos < len(text); {
		pos++ // skip the newline
		next := len(text)
		if nl := strings.IndexByte(text[pos:], '\n'); nl >= 0 {
			next = pos + nl
		}
		line := strings.TrimSpace(text[pos:next])
		if strings.HasPrefix(line, endMark) {
			lead := strings.Index(text[pos:next], endMark)
			return oldCloseEndMark(text, pos+lead+len(endMark), next)
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
func oldCloseEndMark(text string, from, lineEnd int) int {
	if k := strings.Index(text[from:lineEnd], "-----"); k >= 0 {
		return from + k + len("-----")
	}
	return lineEnd
}
