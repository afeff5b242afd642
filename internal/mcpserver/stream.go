package mcpserver

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/moat-sandbox/moat/internal/session"
)

// A run_command whose request carries a progress token streams its output
// as progress notifications (message `stdout: "..."` or `stderr: "..."`,
// the bytes Go-quoted: no terminal escape, control, bidirectional or
// zero-width character raw, a byte that is not UTF-8 as \xNN), at
// most maxNotes of at most noteBytes each and streamCap bytes in all; the
// result still carries the bounded output.
const (
	noteBytes = 4 << 10
	maxNotes  = 1000
)

// streamer collects a command's output within a bound and, with a progress
// token, streams it.
type streamer struct {
	ctx   context.Context
	ss    *mcp.ServerSession
	token any
	cap   int

	mu             sync.Mutex
	stdout, stderr []byte
	cutOut, cutErr bool
	sent, notes    int
}

// newStreamer keeps at most limit bytes of each stream; it notifies when
// req carries a progress token.
func newStreamer(ctx context.Context, req *mcp.CallToolRequest, limit int) *streamer {
	s := &streamer{ctx: ctx, cap: limit}
	if req != nil && req.Params != nil && req.Session != nil {
		s.token, s.ss = req.Params.GetProgressToken(), req.Session
	}
	return s
}

// output is the session.Output that feeds s.
func (s *streamer) output(st session.Stream, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	buf, cut := &s.stdout, &s.cutOut
	if st == "stderr" {
		buf, cut = &s.stderr, &s.cutErr
	}
	room := s.cap - len(*buf)
	if len(data) > room {
		*cut = true
		*buf = append(*buf, data[:max(room, 0)]...)
	} else {
		*buf = append(*buf, data...)
	}
	if s.token == nil || s.notes >= maxNotes || s.sent >= s.cap {
		return
	}
	chunk := data[:min(len(data), noteBytes, s.cap-s.sent)]
	s.sent += len(chunk)
	s.notes++
	_ = s.ss.NotifyProgress(s.ctx, &mcp.ProgressNotificationParams{
		ProgressToken: s.token,
		Progress:      float64(s.sent),
		Message:       string(st) + ": " + quoteData(chunk), // data: quoted, no escape raw
	})
}

// result is what was kept of each stream, and whether it was cut.
func (s *streamer) result() (stdout, stderr []byte, cutOut, cutErr bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stdout, s.stderr, s.cutOut, s.cutErr
}
