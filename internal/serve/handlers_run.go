package serve

import (
	"context"
	"net/http"
	"time"

	"github.com/moat-sandbox/moat/internal/session"
)

// maxTimeoutMS bounds a request's timeout_ms (a week) so that it cannot
// overflow a time.Duration.
const maxTimeoutMS = 7 * 24 * 3600 * 1000

func (s *Server) run(w http.ResponseWriter, r *http.Request) {
	sess := s.session(w, r)
	if sess == nil {
		return
	}
	var body runBody
	if err := decodeBody(w, r, maxOtherBody, &body); err != nil {
		writeError(w, err)
		return
	}
	req, err := runRequest(body)
	if err != nil {
		writeError(w, err)
		return
	}
	if body.Stream {
		s.runStreamed(w, r, sess, req)
		return
	}
	res, err := sess.Run(r.Context(), req, nil)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, wireResult(res))
}

// runRequest checks a run body and makes the core's request of it.
func runRequest(b runBody) (session.RunRequest, error) {
	if len(b.Argv) == 0 {
		return session.RunRequest{}, errf(session.CodeBadRequest, `"argv" is empty; name the command to run`)
	}
	if b.TimeoutMS < 0 || b.TimeoutMS > maxTimeoutMS {
		return session.RunRequest{}, errf(session.CodeBadRequest, `"timeout_ms" must be from 0 (the policy's) to a week`)
	}
	req := session.RunRequest{Argv: b.Argv, Env: b.Env, Cwd: b.Cwd, Timeout: time.Duration(b.TimeoutMS) * time.Millisecond}
	if b.Stdin != nil {
		req.Stdin = *b.Stdin
	}
	return req, nil
}

// runStreamed runs req with its output sent as it comes, one event per
// chunk, flushed; the client leaving (or not reading for writeTime)
// cancels the run, which kills the command's process tree.
func (s *Server) runStreamed(w http.ResponseWriter, r *http.Request, sess *session.Session, req session.RunRequest) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	st := newStream(w, r, cancel)
	res, err := sess.Run(ctx, req, func(kind session.Stream, data []byte) {
		b := Bytes(data)
		st.send(streamEvent{Type: string(kind), Data: &b})
	})
	if err != nil {
		se := apiError(err)
		st.send(streamEvent{Type: "error", Error: &errorJSON{Code: se.Code, Message: se.Message, Setting: se.Setting}})
		return
	}
	res.Stdout, res.Stderr = nil, nil
	wr := wireResult(res)
	st.send(streamEvent{Type: "exit", Result: &wr})
}
