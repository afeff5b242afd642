package proxy

import (
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"github.com/moat-sandbox/moat/internal/hostpattern"
)

// This file parses where a client wants to go: HTTP request targets,
// authorities (host[:port]) and host names.

// target is a parsed destination.
type target struct {
	host string     // normalized, see Request.Host
	ip   netip.Addr // host as an address when it is an IP literal
	port int
	// authority is host[:port] as the Host header of a forwarded request
	// must carry it: the normalized host, bracketed when IPv6, and the
	// port only when the client gave one.
	authority string
}

// parseRequestTarget parses the request-target of an HTTP request sent to a
// proxy: authority-form (host:port) for CONNECT, with port 443 by default,
// and absolute-form (http://host[:port]/path) for every other method, with
// port 80 by default. https:// targets are refused: clients tunnel those
// with CONNECT.
func parseRequestTarget(method, rt string) (target, error) {
	if method == http.MethodConnect {
		if rt == "" {
			return target{}, errorf("proxy: CONNECT: missing authority")
		}
		return parseAuthority(rt, 443)
	}
	scheme, rest, ok := strings.Cut(rt, "://")
	if !ok || scheme == "" || strings.ContainsAny(scheme, "/?#") {
		return target{}, errorf("proxy: request target %q: not in absolute form (http://host/path)", clip(rt))
	}
	switch {
	case strings.EqualFold(scheme, "http"):
	case strings.EqualFold(scheme, "https"):
		return target{}, errorf("proxy: request target %q: https is not forwarded; use CONNECT", clip(rt))
	default:
		return target{}, errorf("proxy: request target %q: scheme %q is not supported", clip(rt), clip(scheme))
	}
	auth := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		auth = rest[:i]
	}
	if auth == "" {
		return target{}, errorf("proxy: request target %q: missing host", clip(rt))
	}
	return parseAuthority(auth, 80)
}

// parseAuthority parses host[:port]; an IPv6 host must be bracketed. An
// empty port (host:) means defaultPort. User information (user@host) is
// refused. The host follows [hostpattern.NormalizeHost].
func parseAuthority(auth string, defaultPort int) (target, error) {
	bad := func(why string) (target, error) {
		return target{}, errorf("proxy: authority %q: %s", clip(auth), why)
	}
	if strings.Contains(auth, "@") {
		return bad("user information is not allowed")
	}
	var host, port string
	hasPort := false
	if strings.HasPrefix(auth, "[") {
		end := strings.IndexByte(auth, ']')
		if end < 0 {
			return bad("missing ]")
		}
		host = auth[:end+1] // NormalizeHost checks that it holds IPv6
		rest := auth[end+1:]
		if rest != "" {
			if rest[0] != ':' {
				return bad("unexpected text after ]")
			}
			port, hasPort = rest[1:], true
		}
	} else {
		host = auth
		if i := strings.LastIndexByte(auth, ':'); i >= 0 {
			host, port, hasPort = auth[:i], auth[i+1:], true
			if strings.IndexByte(host, ':') >= 0 {
				return bad("an IPv6 address must be bracketed")
			}
		}
	}
	if host == "" {
		return bad("missing host")
	}
	t := target{port: defaultPort}
	if port != "" {
		p, err := parsePort(port)
		if err != nil {
			return bad(err.Error())
		}
		t.port = p
	}
	h, ip, err := hostpattern.NormalizeHost(host)
	if err != nil {
		return target{}, errorf("proxy: host %q: %w", clip(host), err)
	}
	t.host, t.ip = h, ip
	t.authority = h
	if ip.Is6() {
		t.authority = "[" + h + "]"
	}
	if hasPort && port != "" {
		t.authority += ":" + strconv.Itoa(t.port)
	}
	return t, nil
}

// parsePort parses a decimal TCP port, 1 to 65535.
func parsePort(s string) (int, error) {
	if len(s) == 0 || len(s) > 5 {
		return 0, errorf("proxy: port %q: not a number from 1 to 65535", clip(s))
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, errorf("proxy: port %q: not a number from 1 to 65535", clip(s))
		}
		n = n*10 + int(c-'0')
	}
	if n < 1 || n > 65535 {
		return 0, errorf("proxy: port %q: not a number from 1 to 65535", clip(s))
	}
	return n, nil
}

// normalizeHost checks a host that stands without brackets, as in a
// SOCKS5 name field, and returns it normalized by
// [hostpattern.NormalizeHost]: ASCII lower case, one trailing dot removed,
// IP literals in canonical form. Besides what that refuses (zones,
// characters outside [a-z0-9._-], empty, over-long or hyphen-edged labels,
// a numeric last label that some resolvers read as IPv4), it refuses
// brackets, which belong to an authority (see parseAuthority).
func normalizeHost(h string) (string, netip.Addr, error) {
	if strings.ContainsAny(h, "[]") {
		return "", netip.Addr{}, errorf("proxy: host %q: brackets are not allowed here; write an IPv6 address bare", clip(h))
	}
	name, ip, err := hostpattern.NormalizeHost(h)
	if err != nil {
		return "", netip.Addr{}, errorf("proxy: host %q: %w", clip(h), err)
	}
	return name, ip, nil
}

// clip shortens s for an error message.
func clip(s string) string {
	const max = 200
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}
