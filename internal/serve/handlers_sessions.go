package serve

import (
	"net/http"

	"github.com/moat-sandbox/moat/internal/report/jsonv1"
	"github.com/moat-sandbox/moat/internal/session"
)

func (s *Server) listPolicies(w http.ResponseWriter, r *http.Request) {
	p := s.m.Policies()
	if p == nil {
		p = []session.PolicyInfo{}
	}
	writeJSON(w, http.StatusOK, policyList{p})
}

func (s *Server) createSession(w http.ResponseWriter, r *http.Request) {
	var req session.CreateRequest
	if err := decodeBody(w, r, maxOtherBody, &req); err != nil {
		writeError(w, err)
		return
	}
	tokenOK, _ := r.Context().Value(tokenKey{}).(bool)
	sess, err := s.m.Create(r.Context(), req)
	if err != nil {
		writeError(w, err)
		return
	}
	if !s.classify(sess, tokenOK) {
		_, _ = s.m.CloseSession(sess.Info().ID)
		writeError(w, errf(codeUnauthorized, "this policy's sessions have no socket guard (host network or no user namespace): creating one needs the bearer token"))
		return
	}
	writeJSON(w, http.StatusCreated, sess.Info())
}

func (s *Server) listSessions(w http.ResponseWriter, r *http.Request) {
	l := s.m.List()
	if l == nil {
		l = []session.Info{}
	}
	writeJSON(w, http.StatusOK, sessionList{l})
}

// session finds the session the path names, or answers the error.
func (s *Server) session(w http.ResponseWriter, r *http.Request) *session.Session {
	sess, err := s.m.Get(r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return nil
	}
	return sess
}

func (s *Server) getSession(w http.ResponseWriter, r *http.Request) {
	if sess := s.session(w, r); sess != nil {
		writeJSON(w, http.StatusOK, sess.Info())
	}
}

func (s *Server) closeSession(w http.ResponseWriter, r *http.Request) {
	doc, err := s.m.CloseSession(r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, closed{doc})
}

func (s *Server) report(w http.ResponseWriter, r *http.Request) {
	if sess := s.session(w, r); sess != nil {
		writeJSON(w, http.StatusOK, sess.Report())
	}
}

func (s *Server) refusals(w http.ResponseWriter, r *http.Request) {
	if sess := s.session(w, r); sess != nil {
		l := sess.Refusals()
		if l == nil {
			l = []jsonv1.Refusal{}
		}
		writeJSON(w, http.StatusOK, refusalList{l})
	}
}
