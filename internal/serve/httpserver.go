package serve

import (
	"log"
	"net/http"
	"time"
)

// Timeouts of the HTTP server: a client has 10 s to send its headers (a
// slow one cannot pin a connection), 10 s plus 1 s a MiB for a body, read
// before the request takes a turn (decode.go), and an idle connection is
// closed after 2 minutes. There is no overall write
// timeout, since a streamed run lasts as long as its command; each write
// has its own deadline (writeTime).
const (
	readHeaderTimeout = 10 * time.Second
	idleTimeout       = 2 * time.Minute
	maxHeaderBytes    = 64 << 10
)

// HTTPServer returns the http.Server that serves s on the listeners of
// Listen: its timeouts bound slow clients, and each connection's kind
// (verified socket, TCP) reaches the handlers.
func (s *Server) HTTPServer() *http.Server {
	return &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ConnContext:       ConnContext,
		ErrorLog:          log.New(s.log, "moat serve: ", 0),
	}
}
