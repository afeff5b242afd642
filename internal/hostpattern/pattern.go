package hostpattern

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Kind says what a [Pattern] matches.
type Kind uint8

const (
	// KindNone is the kind of the zero Pattern, which matches nothing.
	KindNone Kind = iota
	// KindName matches exactly one DNS name ("example.com").
	KindName
	// KindWildcard matches any name below a domain, at any depth, but not
	// the domain itself ("*.example.com").
	KindWildcard
	// KindPrefix matches the IP addresses of a prefix; a single address
	// ("192.0.2.1") is a prefix with every bit set.
	KindPrefix
)

// Pattern is one parsed allow-list pattern: a DNS name, a wildcard, an IP
// address or a CIDR prefix, optionally with a port. Make one with [Parse].
// The zero value matches nothing.
type Pattern struct {
	kind   Kind
	name   string       // KindName, KindWildcard: normalized, without "*."
	prefix netip.Prefix // KindPrefix
	port   int          // 0 means any port
}

// errNotHost refuses what looks like a URL or a path.
var errNotHost = errors.New("want a host, *.domain, IP address or CIDR prefix, optionally with :PORT, not a URL or path")

// Parse parses one allow-list pattern. A pattern is one of:
//
//   - a DNS name, "example.com": that name only, not its subdomains;
//   - a wildcard, "*.example.com": any name below example.com, at any
//     depth, but not example.com itself;
//   - an IP address, "192.0.2.1", "2001:db8::1" or "[2001:db8::1]";
//   - a CIDR prefix without host bits, "10.0.0.0/8", "fd00::/8" or
//     "[fd00::/8]";
//
// optionally followed by ":PORT", a decimal 1 through 65535 without sign or
// leading zeros, to match that port only (IPv6 then in brackets:
// "[::1]:8080"); without a port every port matches. Names follow the rules
// of [NormalizeHost] and are matched without regard to case or a trailing
// dot. An empty pattern, a space or control character, a scheme ("://"),
// user information ("@"), a path, a "*" anywhere but a leading "*.", an
// IPv6 zone or a bad port is an error.
func Parse(s string) (Pattern, error) {
	switch {
	case s == "":
		return Pattern{}, errors.New("empty pattern")
	case strings.Contains(s, "://") || strings.IndexByte(s, '@') >= 0:
		return Pattern{}, errNotHost
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c == 0x7f {
			return Pattern{}, fmt.Errorf("invalid character %q", rune(c))
		}
	}
	host, port, bracketed, err := splitPort(s)
	if err != nil {
		return Pattern{}, err
	}
	p := Pattern{port: port}
	switch {
	case strings.IndexByte(host, '/') >= 0:
		pfx, err := netip.ParsePrefix(host)
		if err != nil {
			addr, _, _ := strings.Cut(host, "/")
			a, aerr := netip.ParseAddr(addr)
			switch {
			case aerr != nil:
				return Pattern{}, errNotHost
			case a.Zone() != "":
				return Pattern{}, errors.New("IPv6 zones are not allowed")
			}
			return Pattern{}, fmt.Errorf("invalid CIDR prefix %q", host)
		}
		if bracketed && !pfx.Addr().Is6() {
			return Pattern{}, errors.New("brackets must hold an IPv6 address")
		}
		if pfx != pfx.Masked() {
			return Pattern{}, fmt.Errorf("CIDR prefix %q has host bits set (did you mean %s?)", host, pfx.Masked())
		}
		p.kind, p.prefix = KindPrefix, pfx
		return p, nil
	case bracketed:
		ip, err := parseIP(host, true)
		if err != nil {
			return Pattern{}, err
		}
		p.kind, p.prefix = KindPrefix, netip.PrefixFrom(ip, ip.BitLen())
		return p, nil
	}
	if ip, err := parseIP(host, false); err == nil {
		p.kind, p.prefix = KindPrefix, netip.PrefixFrom(ip, ip.BitLen())
		return p, nil
	} else if err != errNotIP {
		return Pattern{}, err
	}
	if host == "*" {
		return Pattern{}, errors.New(`"*" alone would match every host: use allow-all`)
	}
	p.kind = KindName
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		p.kind, host = KindWildcard, rest
	}
	if strings.IndexByte(host, '*') >= 0 {
		return Pattern{}, errors.New(`"*" may only lead, as in *.example.com`)
	}
	if p.name, err = normalizeName(host); err != nil {
		return Pattern{}, err
	}
	return p, nil
}

// splitPort splits a pattern into its host and port (0 for none). A
// bracketed host must be IPv6; more than one colon without brackets is an
// IPv6 address or prefix without a port.
func splitPort(s string) (host string, port int, bracketed bool, err error) {
	var portText string
	var hasPort bool
	switch {
	case s[0] == '[':
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", 0, false, errors.New("unbalanced brackets: missing ]")
		}
		host, bracketed = s[1:end], true
		if rest := s[end+1:]; rest != "" {
			if portText, hasPort = strings.CutPrefix(rest, ":"); !hasPort {
				return "", 0, false, fmt.Errorf("unexpected %q after \"]\": want [IPv6]:PORT", rest)
			}
		}
	case strings.Count(s, ":") == 1:
		host, portText, hasPort = strings.Cut(s, ":")
	default:
		host = s
	}
	if strings.ContainsAny(host, "[]") {
		return "", 0, false, errors.New("unbalanced brackets")
	}
	if host == "" {
		return "", 0, false, errors.New("empty host name")
	}
	if hasPort {
		if port, err = parsePort(portText); err != nil {
			return "", 0, false, err
		}
	}
	return host, port, bracketed, nil
}

// parsePort parses a decimal port 1 through 65535 without sign or leading
// zeros.
func parsePort(s string) (int, error) {
	bad := fmt.Errorf("bad port %q: want 1 through 65535", s)
	if s == "" || len(s) > 5 || s[0] == '0' {
		return 0, bad
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, bad
		}
		n = n*10 + int(c-'0')
	}
	if n > 65535 {
		return 0, bad
	}
	return n, nil
}

// Kind says what p matches; KindNone for the zero Pattern.
func (p Pattern) Kind() Kind { return p.kind }

// Name returns the normalized name of a KindName pattern, or the domain
// below which a KindWildcard pattern matches (without "*."); "" for any
// other kind.
func (p Pattern) Name() string { return p.name }

// Prefix returns the prefix of a KindPrefix pattern, a single address
// having every bit set; the zero Prefix for any other kind.
func (p Pattern) Prefix() netip.Prefix { return p.prefix }

// Port returns the port p is limited to, 0 meaning any port.
func (p Pattern) Port() int { return p.port }

// Match reports whether p matches a connection to host and port; host is
// normalized with [NormalizeHost] first, and one it refuses matches
// nothing. A name or wildcard pattern matches only a name, never an
// address it may resolve to, and a prefix pattern matches only an address.
func (p Pattern) Match(host string, port int) bool {
	name, ip, err := NormalizeHost(host)
	return err == nil && p.MatchNormal(name, ip, port)
}

// MatchNormal is [Pattern.Match] for a host that [NormalizeHost] has
// already turned into name and ip, so that a list of patterns normalizes
// the host once.
func (p Pattern) MatchNormal(name string, ip netip.Addr, port int) bool {
	if port < 1 || port > 65535 || p.port != 0 && p.port != port {
		return false
	}
	switch p.kind {
	case KindName:
		return !ip.IsValid() && name == p.name
	case KindWildcard:
		return !ip.IsValid() && len(name) > len(p.name)+1 &&
			strings.HasSuffix(name, p.name) && name[len(name)-len(p.name)-1] == '.'
	case KindPrefix:
		return ip.IsValid() && p.prefix.Contains(ip)
	}
	return false
}

// String returns p in normalized pattern form, which [Parse] reads back
// to p: names in lower case without a trailing dot, addresses and prefixes
// in canonical form (a single address without "/32" or "/128"), and IPv6
// in brackets only before a port. The zero Pattern is "".
func (p Pattern) String() string {
	var host string
	switch p.kind {
	case KindNone:
		return ""
	case KindName:
		host = p.name
	case KindWildcard:
		host = "*." + p.name
	case KindPrefix:
		if p.prefix.IsSingleIP() {
			host = p.prefix.Addr().String()
		} else {
			host = p.prefix.String()
		}
		if p.prefix.Addr().Is6() && p.port != 0 {
			host = "[" + host + "]"
		}
	}
	if p.port != 0 {
		host += ":" + strconv.Itoa(p.port)
	}
	return host
}
