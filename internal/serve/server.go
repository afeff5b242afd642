package serve

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/moat-sandbox/moat/internal/session"
)

// Options configure a Server. The zero value is unusable: Manager is
// required.
type Options struct {
	// Manager holds the sessions served; required.
	Manager *session.Manager
	// Token is the bearer token, hex; empty refuses every request that
	// needs one.
	Token string
	// MaxConcurrent bounds requests handled at once (streams included);
	// 0 means 256. A request waits up to QueueWait for its turn, then is
	// answered busy.
	MaxConcurrent int
	// QueueWait is how long a request waits for a turn; 0 means 10 s.
	QueueWait time.Duration
	// MaxBodies bounds requests whose bodies are being read at once; 0
	// means 64. A body is read whole before its request takes one of the
	// MaxConcurrent turns, so clients that send their bodies slowly hold
	// only these, never the turns of requests without a body (GET,
	// DELETE). A request waits up to QueueWait for one, then is answered
	// busy.
	MaxBodies int
	// BodyTime is how long a client has to send a request body once its
	// headers are in; 0 means 10 s, plus 1 s per MiB of the body.
	BodyTime time.Duration
	// Log receives one line per refused connection or failed request;
	// nil discards.
	Log io.Writer
}

// Server answers the HTTP API over one session.Manager. The zero value is
// unusable; make one with New.
type Server struct {
	m     *session.Manager
	token []byte
	sem   chan struct{}
	wait  time.Duration
	log   io.Writer

	bodies   chan struct{} // requests reading their bodies
	bodyTime time.Duration // 0: the default, by size

	mu       sync.Mutex
	guardOff map[string]bool // live sessions without the socket guard
}

// New makes a Server.
func New(opt Options) (*Server, error) {
	if opt.Manager == nil {
		return nil, fmt.Errorf("serve: no session manager")
	}
	n := opt.MaxConcurrent
	if n <= 0 {
		n = 256
	}
	log := opt.Log
	if log == nil {
		log = io.Discard
	}
	wait := opt.QueueWait
	if wait <= 0 {
		wait = queueWait
	}
	nb := opt.MaxBodies
	if nb <= 0 {
		nb = 64
	}
	return &Server{m: opt.Manager, token: []byte(opt.Token), sem: make(chan struct{}, n), wait: wait, log: log,
		bodies: make(chan struct{}, nb), bodyTime: opt.BodyTime, guardOff: map[string]bool{}}, nil
}

// queueWait is the default bound on how long a request waits for a free
// slot.
const queueWait = 10 * time.Second

// Handler is the API: authorization, the request body read whole (under
// its own bound and deadline), the bound on concurrent requests, then the
// routes.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	seen := map[string]bool{}
	for _, rt := range s.routes() {
		mux.HandleFunc(rt.Method+" "+rt.Pattern, rt.handle)
		if !seen[rt.Pattern] {
			seen[rt.Pattern] = true
			mux.HandleFunc(rt.Pattern, methodNotAllowed)
		}
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, errf(session.CodeNotFound, "no such route; see GET /v1/openapi.json"))
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 {
			// Whatever is answered, the body left unread is discarded
			// within a bounded time (net/http reads up to 256 KiB of it).
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.bodyDeadline(r)))
		}
		tokenOK, err := s.authorize(r)
		if err != nil {
			fmt.Fprintf(s.log, "moat serve: refused %s %q: %v\n", r.Method, trimmed(r.URL.Path), err)
			w.Header().Set("WWW-Authenticate", `Bearer realm="moat"`)
			writeError(w, err)
			return
		}
		req := r.WithContext(context.WithValue(r.Context(), tokenKey{}, tokenOK))
		var bodyRead func()
		if r.ContentLength != 0 {
			body, done, err := s.readBody(w, r)
			if err != nil {
				writeError(w, err)
				return
			}
			req.Body, bodyRead = body, done
		}
		ok := acquire(r.Context(), s.sem, s.wait)
		if bodyRead != nil {
			bodyRead() // held until now, so that bodies read wait in a bounded number
		}
		if !ok {
			writeError(w, errf(session.CodeBusy, "the server is handling too many requests; retry"))
			return
		}
		defer func() { <-s.sem }()
		mux.ServeHTTP(w, req)
	})
}

// acquire takes a slot of sem, waiting up to wait for one.
func acquire(ctx context.Context, sem chan struct{}, wait time.Duration) bool {
	select {
	case sem <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case sem <- struct{}{}:
		return true
	case <-ctx.Done():
	case <-t.C:
	}
	return false
}

func methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	writeError(w, errf(codeMethodNotAllowed, fmt.Sprintf("method %s is not allowed here", trimmed(r.Method))))
}

// Route is one route of the API, for the mux and the OpenAPI test. The
// zero value is no route.
type Route struct {
	Method  string // GET, POST, PUT, DELETE
	Pattern string // as net/http's ServeMux reads it, e.g. /v1/sessions/{id}
	handle  http.HandlerFunc
}

// Routes lists every route the server answers.
func (s *Server) Routes() []Route { return s.routes() }

func (s *Server) routes() []Route {
	return []Route{
		{"GET", "/v1/openapi.json", serveOpenAPI},
		{"GET", "/v1/policies", s.listPolicies},
		{"POST", "/v1/sessions", s.createSession},
		{"GET", "/v1/sessions", s.listSessions},
		{"GET", "/v1/sessions/{id}", s.getSession},
		{"DELETE", "/v1/sessions/{id}", s.closeSession},
		{"POST", "/v1/sessions/{id}/run", s.run},
		{"POST", "/v1/sessions/{id}/processes", s.startProc},
		{"GET", "/v1/sessions/{id}/processes", s.listProcs},
		{"GET", "/v1/sessions/{id}/processes/{pid}/output", s.procOutput},
		{"POST", "/v1/sessions/{id}/processes/{pid}/signal", s.signalProc},
		{"DELETE", "/v1/sessions/{id}/processes/{pid}", s.stopProc},
		{"GET", "/v1/sessions/{id}/files", s.readFile},
		{"PUT", "/v1/sessions/{id}/files", s.writeFile},
		{"GET", "/v1/sessions/{id}/files/list", s.listFiles},
		{"GET", "/v1/sessions/{id}/files/stat", s.statFile},
		{"GET", "/v1/sessions/{id}/report", s.report},
		{"GET", "/v1/sessions/{id}/refusals", s.refusals},
	}
}
