package proxy

import (
	"bufio"
	"net/http"
	"strconv"
	"strings"
)

// This file writes the proxy's own HTTP answers (errors and refusals) and
// words refusals.

// maxReasonLen bounds a policy's reason in messages.
const maxReasonLen = 500

// refusalMessage words a refusal in one line, for a 403/502 body or a log.
func (s *Server) refusalMessage(ref *refusal) string {
	if ref.kind == refusedByResolve {
		return "moat: proxy: " + strconv.Quote(ref.host) + ": " + oneLine(ref.reason)
	}
	policy := "moat: network policy"
	if s.cfg.PolicyName != "" {
		policy += " " + oneLine(s.cfg.PolicyName)
	}
	return policy + ": " + strconv.Quote(ref.host) + " is not allowed: " + oneLine(ref.reason)
}

// refusalStatus is the HTTP status for a refusal.
func refusalStatus(ref *refusal) int {
	if ref.kind == refusedByResolve {
		return 502
	}
	return 403
}

// oneLine makes s safe for a one-line message: control characters become
// spaces and it is cut to maxReasonLen bytes.
func oneLine(s string) string {
	if len(s) > maxReasonLen {
		s = s[:maxReasonLen] + "..."
	}
	if strings.IndexFunc(s, isControl) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isControl(r) {
			return ' '
		}
		return r
	}, s)
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }

// writeError writes a complete text/plain response whose body is msg and a
// newline. closeConn adds "Connection: close"; a 407 carries the
// Proxy-Authenticate challenge.
func writeError(bw *bufio.Writer, status int, msg string, closeConn bool) error {
	body := oneLine(msg) + "\n"
	bw.WriteString("HTTP/1.1 ")
	bw.WriteString(strconv.Itoa(status))
	bw.WriteByte(' ')
	bw.WriteString(http.StatusText(status))
	bw.WriteString("\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ")
	bw.WriteString(strconv.Itoa(len(body)))
	bw.WriteString("\r\n")
	if status == 407 {
		bw.WriteString("Proxy-Authenticate: Basic realm=\"moat\"\r\n")
	}
	if closeConn {
		bw.WriteString("Connection: close\r\n")
	}
	bw.WriteString("\r\n")
	bw.WriteString(body)
	return bw.Flush()
}
