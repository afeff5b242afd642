package moat

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// AllowListPolicy allows connections to the hosts it lists and denies every
// other. Make one with [AllowList]. The zero value lists nothing: it denies
// everything, and so runs no proxy.
type AllowListPolicy struct {
	entries []allowEntry
}

type entryKind uint8

const (
	entryName   entryKind = iota // exactly this DNS name
	entrySuffix                  // any name below this one (*.name)
	entryPrefix                  // an IP address or CIDR prefix
)

// allowEntry is one parsed allow-list pattern.
type allowEntry struct {
	kind   entryKind
	name   string       // entryName, entrySuffix: normalized, without "*."
	prefix netip.Prefix // entryPrefix; a single address has every bit set
	port   int          // 0 means any port
}

// AllowList returns a policy that allows connections to the hosts that
// patterns list. Each pattern is one of:
//
//   - a DNS name, "example.com": that name only, not its subdomains;
//   - a wildcard, "*.example.com": any name below example.com, at any depth,
//     but not example.com itself (list both for both);
//   - an IP address, "192.0.2.1", "2001:db8::1" or "[2001:db8::1]";
//   - a CIDR prefix, "10.0.0.0/8", "fd00::/8" or "[fd00::/8]";
//
// optionally followed by ":PORT" to allow that port only (IPv6 then in
// brackets: "[::1]:8080"); without a port every port is allowed. Names are
// matched without regard to case or a trailing dot; "example.com" never
// matches "example.com.evil.net". A name pattern matches only a request
// for that name, never a bare IP address it may resolve to, and an IP or
// CIDR pattern matches only a request that names an address.
//
// The proxy refuses local addresses (loopback, private networks and the
// like) whatever the policy says, except where [Config.AllowLocal] lists
// them and for a request that names an address listed here by an IP or CIDR
// pattern: listing an address is explicit consent to reach it.
//
// A pattern that is empty, holds a space, a scheme ("http://"), a path or
// a "*" anywhere but a leading "*.", or a port outside 1 through 65535 is an
// error that names it. Non-ASCII names must be given in their xn-- form.
func AllowList(patterns ...string) (*AllowListPolicy, error) {
	p := &AllowListPolicy{entries: make([]allowEntry, 0, len(patterns))}
	for _, s := range patterns {
		e, err := parseAllowEntry(s)
		if err != nil {
			return nil, errorf("allow list entry %q: %v", s, err)
		}
		p.entries = append(p.entries, e)
	}
	return p, nil
}

// Decide allows r if a pattern matches its host and port; the reason names
// the first pattern that matches. A match by an IP or CIDR pattern sets
// [NetworkDecision.ExplicitIP].
func (p *AllowListPolicy) Decide(_ context.Context, r NetworkRequest) NetworkDecision {
	name, ip, err := normalizeHost(r.Host)
	if err != nil {
		return NetworkDecision{Reason: "invalid host"}
	}
	if r.Port < 1 || r.Port > 65535 {
		return NetworkDecision{Reason: "invalid port"}
	}
	if p != nil {
		for _, e := range p.entries {
			if e.match(name, ip, r.Port) {
				return NetworkDecision{
					Allow:      true,
					Reason:     "matches " + strconv.Quote(e.String()),
					ExplicitIP: e.kind == entryPrefix,
				}
			}
		}
	}
	return NetworkDecision{Reason: "not on the allow list"}
}

// DeniesAll reports whether the list is empty.
func (p *AllowListPolicy) DeniesAll() bool { return p == nil || len(p.entries) == 0 }

// Patterns returns the patterns in their normalized form, in the order
// given: lower case, without a trailing dot, IPv6 in canonical form.
func (p *AllowListPolicy) Patterns() []string {
	if p == nil {
		return nil
	}
	out := make([]string, len(p.entries))
	for i, e := range p.entries {
		out[i] = e.String()
	}
	return out
}

// match reports whether the normalized host (name, or ip when valid) and
// port match e.
func (e allowEntry) match(name string, ip netip.Addr, port int) bool {
	if e.port != 0 && e.port != port {
		return false
	}
	switch e.kind {
	case entryName:
		return !ip.IsValid() && name == e.name
	case entrySuffix:
		return !ip.IsValid() && len(name) > len(e.name)+1 &&
			strings.HasSuffix(name, e.name) && name[len(name)-len(e.name)-1] == '.'
	case entryPrefix:
		return ip.IsValid() && e.prefix.Contains(ip)
	}
	return false
}

// String returns the entry in normalized pattern form.
func (e allowEntry) String() string {
	var host string
	switch e.kind {
	case entryName:
		host = e.name
	case entrySuffix:
		host = "*." + e.name
	case entryPrefix:
		if e.prefix.IsSingleIP() {
			host = e.prefix.Addr().String()
		} else {
			host = e.prefix.String()
		}
		if e.prefix.Addr().Is6() && e.port != 0 {
			host = "[" + host + "]"
		}
	}
	if e.port != 0 {
		host += ":" + strconv.Itoa(e.port)
	}
	return host
}

// parseAllowEntry parses one pattern of AllowList. Its errors name the
// problem only.
func parseAllowEntry(s string) (allowEntry, error) {
	if s == "" {
		return allowEntry{}, errors.New("empty pattern")
	}
	if strings.Contains(s, "://") {
		return allowEntry{}, errors.New("want a host, not a URL")
	}
	for _, c := range []byte(s) {
		if c <= ' ' || c == 0x7f {
			return allowEntry{}, fmt.Errorf("invalid character %q", rune(c))
		}
	}
	host, port, bracketed, err := splitAllowPort(s)
	if err != nil {
		return allowEntry{}, err
	}
	e := allowEntry{port: port}
	switch {
	case strings.Contains(host, "/"):
		pfx, err := netip.ParsePrefix(host)
		if err != nil {
			addr, _, _ := strings.Cut(host, "/")
			if _, aerr := netip.ParseAddr(addr); aerr != nil {
				return e, errors.New("want a host, not a URL or path")
			}
			return e, fmt.Errorf("invalid CIDR prefix %q", host)
		}
		if bracketed && !pfx.Addr().Is6() {
			return e, errors.New("brackets must hold an IPv6 address")
		}
		if pfx != pfx.Masked() {
			return e, fmt.Errorf("CIDR prefix %q has host bits set (did you mean %s?)", host, pfx.Masked())
		}
		e.kind, e.prefix = entryPrefix, pfx
		return e, nil
	case bracketed:
		ip, err := parseIP(host, true)
		if err != nil {
			return e, err
		}
		e.kind, e.prefix = entryPrefix, netip.PrefixFrom(ip, ip.BitLen())
		return e, nil
	}
	if ip, err := parseIP(host, false); err == nil {
		e.kind, e.prefix = entryPrefix, netip.PrefixFrom(ip, ip.BitLen())
		return e, nil
	} else if err != errNotIP {
		return e, err
	}
	e.kind = entryName
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		e.kind, host = entrySuffix, rest
	}
	if strings.Contains(host, "*") {
		return e, errors.New(`"*" is allowed only as a leading "*."`)
	}
	name, err := normalizeName(host)
	if err != nil {
		return e, err
	}
	e.name = name
	return e, nil
}

// splitAllowPort splits a pattern into its host and port (0 for none).
// A bracketed host must be IPv6; more than one colon without brackets is an
// IPv6 address or prefix without a port.
func splitAllowPort(s string) (host string, port int, bracketed bool, err error) {
	var portText string
	var hasPort bool
	switch {
	case s[0] == '[':
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", 0, false, errors.New("unbalanced brackets")
		}
		host, bracketed = s[1:end], true
		rest := s[end+1:]
		if rest != "" {
			if portText, hasPort = strings.CutPrefix(rest, ":"); !hasPort {
				return "", 0, false, fmt.Errorf("unexpected %q after \"]\"", rest)
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
		return "", 0, false, errors.New("empty host")
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
	for _, c := range []byte(s) {
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
