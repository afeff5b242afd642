package proxy

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"
)

// This file serves HTTP/1.1 client connections: request parsing,
// authentication, and forwarding of absolute-form requests. CONNECT is in
// connect.go.

// bodyGrace is how long the proxy waits, once a response is complete, for
// the request body it is still sending upstream to end, before it gives up
// on both connections.
const bodyGrace = time.Second

// httpConn is one client connection speaking HTTP/1.1 to the proxy.
type httpConn struct {
	s  *Server
	c  net.Conn
	br *bufio.Reader
	bw *bufio.Writer
	lr *limitedReader
	up *upstream // kept for the next request to the same host and port; nil when none
}

// upstream is a connection to an origin server, dialed to a checked address.
type upstream struct {
	host string     // Request.Host it was dialed for
	port int        // and its port
	ip   netip.Addr // the checked address it is connected to
	c    net.Conn
	lr   *limitedReader // bounds response heads; br reads through it
	br   *bufio.Reader
	bw   *bufio.Writer
}

// serveHTTP serves requests on c until the client or the proxy ends the
// connection. The first byte has been read into br already.
func (s *Server) serveHTTP(c net.Conn, br *bufio.Reader, lr *limitedReader) {
	h := &httpConn{s: s, c: c, br: br, bw: getWriter(c), lr: lr}
	defer func() {
		h.dropUpstream()
		putWriter(h.bw)
	}()
	for first := true; h.serveRequest(first); first = false {
	}
}

// serveRequest reads and answers one request. It reports whether the
// connection may carry another.
func (h *httpConn) serveRequest(first bool) bool {
	s := h.s
	if !first {
		h.c.SetReadDeadline(time.Now().Add(s.cfg.IdleTimeout))
		if _, err := h.br.Peek(1); err != nil {
			return false
		}
		h.c.SetReadDeadline(time.Now().Add(s.cfg.HeaderTimeout))
	}
	// The bytes already buffered (the first one peeked, or a pipelined
	// request) count against the bound.
	h.lr.setLimit(int64(s.cfg.MaxHeaderBytes) + int64(h.br.Size()-h.br.Buffered()))
	req, err := http.ReadRequest(h.br)
	if err != nil {
		switch {
		case h.lr.reached:
			writeError(h.bw, http.StatusRequestHeaderFieldsTooLarge, "moat: proxy: request header too large", true)
		case !isQuietReadError(err):
			writeError(h.bw, http.StatusBadRequest, "moat: proxy: malformed request: "+err.Error(), true)
		}
		return false
	}
	h.lr.setLimit(-1)
	hasBody := req.Body != http.NoBody
	if hasBody || req.Method == http.MethodConnect {
		// The body or the tunnel is read without a deadline. Otherwise
		// nothing is read from the client until the next request,
		// which sets its own.
		h.c.SetReadDeadline(time.Time{})
	}

	keep := !req.Close && req.ProtoAtLeast(1, 1)
	// fail answers with an error. The connection stays open only when no
	// request body is left unread in it.
	fail := func(status int, msg string) bool {
		keep = keep && !hasBody
		writeError(h.bw, status, msg, !keep)
		return keep
	}
	if !s.authorized(req.Header) {
		return fail(http.StatusProxyAuthRequired, "moat: proxy: authentication required")
	}
	t, err := parseRequestTarget(req.Method, req.RequestURI)
	if err != nil {
		return fail(http.StatusBadRequest, err.Error())
	}
	if req.Method == http.MethodConnect {
		h.connect(t)
		return false
	}
	expect := req.Header.Get("Expect")
	if expect != "" && !strings.EqualFold(expect, "100-continue") {
		return fail(http.StatusExpectationFailed, "moat: proxy: Expect "+strconv.Quote(expect)+": not supported")
	}

	var pinned netip.Addr
	if h.up != nil && h.up.host == t.host && h.up.port == t.port {
		pinned = h.up.ip
	} else {
		h.dropUpstream()
	}
	r := Request{Protocol: ProtocolHTTP, Host: t.host, Port: t.port}
	adm, ref := s.admit(s.ctx, r, t.ip, pinned)
	if ref != nil {
		h.dropUpstream()
		return fail(refusalStatus(ref), s.refusalMessage(ref))
	}
	if h.up == nil {
		if err := h.dialUpstream(adm, t); err != nil {
			return fail(http.StatusBadGateway, dialMessage(t, err))
		}
	}
	if expect != "" {
		req.Header.Del("Expect")
		if hasBody && req.ProtoAtLeast(1, 1) {
			h.bw.WriteString("HTTP/1.1 100 Continue\r\n\r\n")
			if h.bw.Flush() != nil {
				return false
			}
		}
	}
	return h.forward(req, t, adm, pinned.IsValid(), keep)
}

// forward sends req upstream and its response to the client. It reports
// whether the client connection may carry another request.
func (h *httpConn) forward(req *http.Request, t target, adm admission, reused, keep bool) bool {
	removeHopHeaders(req.Header)
	if _, ok := req.Header["User-Agent"]; !ok {
		// An empty value stops Request.Write from adding its own.
		req.Header["User-Agent"] = []string{""}
	}
	req.Host = t.authority
	req.Close = false

	resp, bodyDone, err := h.roundTrip(req, t, adm, reused)
	if err != nil {
		h.dropUpstream()
		if bodyDone != nil || !keep {
			writeError(h.bw, http.StatusBadGateway, upstreamMessage(t, err), true)
			return false
		}
		writeError(h.bw, http.StatusBadGateway, upstreamMessage(t, err), false)
		return true
	}
	reusable := !resp.Close

	removeHopHeaders(resp.Header)
	resp.Proto, resp.ProtoMajor, resp.ProtoMinor = "HTTP/1.1", 1, 1
	if resp.ContentLength < 0 && bodyAllowed(req.Method, resp.StatusCode) {
		if req.ProtoAtLeast(1, 1) {
			// Re-frame a body of unknown length so that the client
			// connection survives it.
			resp.TransferEncoding = []string{"chunked"}
		} else {
			resp.TransferEncoding = nil
			keep = false
		}
	}
	resp.Close = !keep
	err = resp.Write(h.bw)
	if err == nil {
		err = h.bw.Flush()
	}
	if err != nil {
		keep, reusable = false, false
	}
	if bodyDone != nil {
		timer := time.NewTimer(bodyGrace)
		select {
		case berr := <-bodyDone:
			timer.Stop()
			if berr != nil {
				keep, reusable = false, false
			}
		case <-timer.C:
			// The origin answered without taking the whole request
			// body: neither connection is in a known state.
			h.up.c.Close()
			h.c.Close()
			<-bodyDone
			h.dropUpstream()
			return false
		}
	}
	if !reusable {
		h.dropUpstream()
	}
	return keep
}

// roundTrip sends req over the upstream connection and reads the response
// head, passing 1xx responses on to the client. A request without a body
// that fails on a reused connection (the origin closed it while idle) is
// sent once more on a new connection to the same checked address. When req
// has a body, it is written by a goroutine that reports on bodyDone, so
// that an origin may answer before it has read the body.
func (h *httpConn) roundTrip(req *http.Request, t target, adm admission, reused bool) (*http.Response, chan error, error) {
	for {
		resp, bodyDone, err := h.tryRoundTrip(req)
		if err == nil || !reused || bodyDone != nil || !idempotent(req.Method) {
			return resp, bodyDone, err
		}
		reused = false
		h.dropUpstream()
		if err := h.dialUpstream(adm, t); err != nil {
			return nil, nil, err
		}
	}
}

func (h *httpConn) tryRoundTrip(req *http.Request) (*http.Response, chan error, error) {
	up := h.up
	var bodyDone chan error
	if req.Body == http.NoBody {
		err := req.Write(up.bw)
		if err == nil {
			err = up.bw.Flush()
		}
		if err != nil {
			return nil, nil, err
		}
	} else {
		bodyDone = make(chan error, 1)
		h.s.goroutine(func() {
			err := req.Write(up.bw)
			if err == nil {
				err = up.bw.Flush()
			}
			if err != nil {
				// Unblock the response read: the origin may be
				// waiting for the rest of the body.
				up.c.Close()
			}
			bodyDone <- err
		})
	}
	// One bound for every head of this exchange, 1xx ones included. The
	// reader may have buffered up to its size past the head.
	up.lr.setLimit(int64(h.s.cfg.MaxHeaderBytes) + int64(up.br.Size()-up.br.Buffered()))
	defer up.lr.setLimit(-1)
	for {
		resp, err := http.ReadResponse(up.br, req)
		if err != nil && up.lr.reached {
			err = errors.New("response header over " + strconv.Itoa(h.s.cfg.MaxHeaderBytes) + " bytes")
		}
		if err == nil && resp.StatusCode == http.StatusSwitchingProtocols {
			resp.Body.Close()
			err = errors.New("unexpected 101 Switching Protocols")
		}
		if err != nil {
			if bodyDone != nil {
				up.c.Close()
				<-bodyDone
			}
			return nil, bodyDone, err
		}
		if resp.StatusCode >= 200 {
			return resp, bodyDone, nil
		}
		// 1xx: informational, passed on as is (less hop-by-hop headers).
		removeHopHeaders(resp.Header)
		h.bw.WriteString("HTTP/1.1 " + resp.Status + "\r\n")
		resp.Header.Write(h.bw)
		h.bw.WriteString("\r\n")
		if err := h.bw.Flush(); err != nil {
			if bodyDone != nil {
				up.c.Close()
				<-bodyDone
			}
			return nil, bodyDone, err
		}
	}
}

// dialUpstream connects to the first answering admitted address and keeps
// the connection for requests to t.
func (h *httpConn) dialUpstream(adm admission, t target) error {
	c, ip, err := h.s.dial(h.s.ctx, adm, t.port)
	if err != nil {
		return err
	}
	if !h.s.track(c) {
		return ErrServerClosed
	}
	lr := &limitedReader{r: c, n: -1}
	h.up = &upstream{host: t.host, port: t.port, ip: ip, c: c, lr: lr, br: getReader(lr), bw: getWriter(c)}
	return nil
}

// dropUpstream closes the kept upstream connection, if any.
func (h *httpConn) dropUpstream() {
	if h.up == nil {
		return
	}
	h.s.untrack(h.up.c)
	putReader(h.up.br)
	putWriter(h.up.bw)
	h.up = nil
}

// bodyAllowed reports whether a response to method with status may have a
// body.
func bodyAllowed(method string, status int) bool {
	return method != http.MethodHead && status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}

// idempotent reports whether a request with method may be sent twice.
func idempotent(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// isQuietReadError reports read errors that end a connection without an
// answer: the client went away or stayed silent.
func isQuietReadError(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrDeadlineExceeded) ||
		errors.Is(err, errHeaderTooLarge)
}

// dialMessage words a failed dial to t.
func dialMessage(t target, err error) string {
	return "moat: proxy: " + strconv.Quote(hostPort(t.host, t.port)) + ": cannot connect: " + dialErrorText(err)
}

// upstreamMessage words a failed exchange with the origin.
func upstreamMessage(t target, err error) string {
	return "moat: proxy: " + strconv.Quote(hostPort(t.host, t.port)) + ": " + dialErrorText(err)
}
