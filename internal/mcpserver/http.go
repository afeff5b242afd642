package mcpserver

import (
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPPath is where the streamable HTTP transport is served.
const HTTPPath = "/mcp"

// maxHTTPBody bounds one request's body: a write_file of 16 MiB in base64.
const maxHTTPBody = 24 << 20

// HTTPHandler serves the streamable HTTP transport on a loopback port.
// Every request must carry the bearer token, a Host naming a loopback name
// with exactly this port, and no Origin or a loopback one: a web page on
// another origin, or a DNS name rebound to 127.0.0.1, is refused before
// the MCP layer sees anything. There is no unauthenticated mode.
func (s *Server) HTTPHandler(port int, token string) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		SessionTimeout:      30 * time.Minute,
		MaxRequestBodyBytes: maxHTTPBody,
	})
	mux := http.NewServeMux()
	mux.Handle(HTTPPath, h)
	return &guard{next: mux, port: strconv.Itoa(port), token: []byte(token)}
}

// guard checks Host, Origin and the token before anything else runs.
type guard struct {
	next  http.Handler
	port  string
	token []byte
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !g.hostOK(r.Host) {
		deny(w, http.StatusForbidden, "the Host header must name a loopback address with this server's port")
		return
	}
	if o := r.Header.Values("Origin"); len(o) > 1 || len(o) == 1 && !originOK(o[0]) {
		deny(w, http.StatusForbidden, "requests from a non-loopback Origin are refused")
		return
	}
	if !g.tokenOK(r.Header.Values("Authorization")) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="moat mcp"`)
		deny(w, http.StatusUnauthorized, "a bearer token is required: the one in the token file moat mcp named at start")
		return
	}
	g.next.ServeHTTP(w, r)
}

// hostOK accepts 127.0.0.1, [::1] and localhost with exactly this port.
func (g *guard) hostOK(host string) bool {
	h, p, err := net.SplitHostPort(host)
	if err != nil || p != g.port {
		return false
	}
	return loopbackName(h)
}

// loopbackName is localhost or a loopback IP literal.
func loopbackName(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// originOK accepts an http(s) origin on a loopback name, any port.
func originOK(o string) bool {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || (u.Path != "" && u.Path != "/") {
		return false
	}
	return loopbackName(u.Hostname())
}

// tokenOK compares one "Bearer TOKEN" header in constant time.
func (g *guard) tokenOK(vs []string) bool {
	if len(vs) != 1 || len(g.token) == 0 {
		return false
	}
	const prefix = "Bearer "
	v := vs[0]
	if len(v) < len(prefix) || !strings.EqualFold(v[:len(prefix)], prefix) {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(v[len(prefix):]), g.token) == 1
}

func deny(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(`{"error":` + strconv.Quote(msg) + "}\n"))
}

// CheckListen accepts a loopback host:port (port 0 picks one) and refuses
// anything else.
func CheckListen(addr string) error {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if _, err := strconv.ParseUint(p, 10, 16); err != nil {
		return &net.AddrError{Err: "the port is not a number from 0 to 65535", Addr: addr}
	}
	if !loopbackName(h) {
		return &net.AddrError{Err: "moat mcp listens on loopback only (127.0.0.1, [::1] or localhost)", Addr: addr}
	}
	return nil
}
