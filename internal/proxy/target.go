package proxy

import (
	"net/http"
	"net/netip"
	"strconv"
	"strings"
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

// Limits of DNS names (RFC 1035).
const (
	maxHostLen  = 253
	maxLabelLen = 63
)

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
// refused.
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
		host = auth[1:end]
		rest := auth[end+1:]
		if rest != "" {
			if rest[0] != ':' {
				return bad("unexpected text after ]")
			}
			port, hasPort = rest[1:], true
		}
		if a, err := netip.ParseAddr(host); err != nil || !a.Is6() {
			return bad("brackets must hold an IPv6 address")
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
	h, ip, err := normalizeHost(host)
	if err != nil {
		return target{}, err
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

// normalizeHost checks a host (a DNS name or an unbracketed IP literal) and
// returns it normalized: ASCII lower case, one trailing dot removed, IP
// literals in canonical form. It refuses zones, names with characters
// outside [a-z0-9._-], empty or over-long labels, and names whose last
// label is numeric ("127.1", "0x7f.1", "2130706433"), which some resolvers
// would read as IPv4 addresses.
func normalizeHost(h string) (string, netip.Addr, error) {
	bad := func(why string) (string, netip.Addr, error) {
		return "", netip.Addr{}, errorf("proxy: host %q: %s", clip(h), why)
	}
	if strings.IndexByte(h, ':') >= 0 {
		a, err := netip.ParseAddr(h)
		if err != nil {
			return bad("not a valid IPv6 address")
		}
		if a.Zone() != "" {
			return bad("an address zone is not allowed")
		}
		return a.String(), a, nil
	}
	name := strings.TrimSuffix(h, ".")
	if name == "" {
		return bad("empty name")
	}
	if len(name) > maxHostLen {
		return bad("name too long")
	}
	if a, err := netip.ParseAddr(name); err == nil && a.Is4() {
		return a.String(), a, nil
	}
	var b strings.Builder
	lower := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_', c == '.':
		case 'A' <= c && c <= 'Z':
			lower = true
		default:
			return bad("invalid character in name")
		}
	}
	if lower {
		b.Grow(len(name))
		for i := 0; i < len(name); i++ {
			c := name[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b.WriteByte(c)
		}
		name = b.String()
	}
	last := ""
	for label := range strings.SplitSeq(name, ".") {
		if label == "" {
			return bad("empty label")
		}
		if len(label) > maxLabelLen {
			return bad("label too long")
		}
		last = label
	}
	if numericLabel(last) {
		return bad("not a valid IPv4 address")
	}
	return name, netip.Addr{}, nil
}

// numericLabel reports whether a final label would make some resolvers read
// the name as a (non-canonical) IPv4 address: all digits, or 0x and hex.
func numericLabel(l string) bool {
	if len(l) >= 2 && l[0] == '0' && (l[1] == 'x') {
		for i := 2; i < len(l); i++ {
			c := l[i]
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(l); i++ {
		if l[i] < '0' || l[i] > '9' {
			return false
		}
	}
	return true
}

// clip shortens s for an error message.
func clip(s string) string {
	const max = 200
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}
