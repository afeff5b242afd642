package serve

import (
	"net/http"
	"strconv"

	"github.com/moat-sandbox/moat/internal/session"
)

func (s *Server) startProc(w http.ResponseWriter, r *http.Request) {
	sess := s.session(w, r)
	if sess == nil {
		return
	}
	var req session.StartRequest
	if err := decodeBody(w, r, maxOtherBody, &req); err != nil {
		writeError(w, err)
		return
	}
	if len(req.Argv) == 0 {
		writeError(w, errf(session.CodeBadRequest, `"argv" is empty; name the command to start`))
		return
	}
	p, err := sess.Start(req)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, p)
}

func (s *Server) listProcs(w http.ResponseWriter, r *http.Request) {
	if sess := s.session(w, r); sess != nil {
		l := sess.Procs()
		if l == nil {
			l = []session.Proc{}
		}
		writeJSON(w, http.StatusOK, procList{l})
	}
}

// offset reads a non-negative integer query parameter; absent is 0.
func offset(r *http.Request, name string) (int64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, errf(session.CodeBadRequest, name+" "+strconv.Quote(trimmed(v))+": want a non-negative integer")
	}
	return n, nil
}

func (s *Server) procOutput(w http.ResponseWriter, r *http.Request) {
	sess := s.session(w, r)
	if sess == nil {
		return
	}
	so, err := offset(r, "stdout_from")
	if err != nil {
		writeError(w, err)
		return
	}
	se, err := offset(r, "stderr_from")
	if err != nil {
		writeError(w, err)
		return
	}
	out, err := sess.Output(r.PathValue("pid"), so, se)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, procOutput{Proc: out.Proc, Stdout: wireChunk(out.Stdout), Stderr: wireChunk(out.Stderr)})
}

// signals are the names a client may send.
var signals = map[string]bool{"TERM": true, "INT": true, "KILL": true, "HUP": true, "USR1": true, "USR2": true}

func (s *Server) signalProc(w http.ResponseWriter, r *http.Request) {
	sess := s.session(w, r)
	if sess == nil {
		return
	}
	var req signalBody
	if err := decodeBody(w, r, maxOtherBody, &req); err != nil {
		writeError(w, err)
		return
	}
	if !signals[req.Signal] {
		writeError(w, errf(session.CodeBadRequest, "signal "+strconv.Quote(trimmed(req.Signal))+": want TERM, INT, KILL, HUP, USR1 or USR2"))
		return
	}
	id := r.PathValue("pid")
	if err := sess.Signal(id, req.Signal); err != nil {
		writeError(w, err)
		return
	}
	for _, p := range sess.Procs() {
		if p.ID == id {
			writeJSON(w, http.StatusOK, p)
			return
		}
	}
	writeError(w, errf(session.CodeNotFound, "no process "+strconv.Quote(trimmed(id))))
}

func (s *Server) stopProc(w http.ResponseWriter, r *http.Request) {
	sess := s.session(w, r)
	if sess == nil {
		return
	}
	p, err := sess.Stop(r.PathValue("pid"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, p)
}
