// Package hostpattern is moat's one grammar for host names and allow-list
// patterns. The library's allow list (moat.AllowList), the configuration
// front ends (policy.ParseDomain) and the network proxy all check and
// normalize hosts here, so that a pattern one of them accepts means the
// same to the others and a host the proxy lets through is one the policy
// understood.
//
// It imports nothing of moat: it sits below moat, policy and the proxy.
// Its errors say only what is wrong; callers add their subject.
package hostpattern

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// Limits of DNS names (RFC 1035), in bytes, without a trailing dot.
const (
	// MaxNameLen is the longest name.
	MaxNameLen = 253
	// MaxLabelLen is the longest label.
	MaxLabelLen = 63
)

// NormalizeHost checks a host as a client, a policy or a test names it and
// returns it in canonical form.
//
// An IP address, bracketed or not ("192.0.2.1", "2001:DB8::1",
// "[::1]"), comes back in its canonical form without brackets, with ip
// valid; brackets must hold an IPv6 address, and zones ("fe80::1%eth0")
// are refused. An IPv4-mapped IPv6 address stays IPv6.
//
// Anything else is a DNS name: it comes back in ASCII lower case without
// one trailing dot, with ip invalid. It must be at most MaxNameLen bytes of
// labels of 1 to MaxLabelLen letters, digits, hyphens and underscores, no
// label may start or end with a hyphen, and its last label must be neither
// all digits nor "0x" and hex digits, so that the shorthand IPv4 forms
// that some resolvers accept ("127.1", "0x7f.1", "2130706433",
// "192.0.2.1.") are never taken for names. A non-ASCII name must be
// written in its xn-- form.
//
// NormalizeHost is idempotent: what it returns normalizes to itself.
func NormalizeHost(host string) (name string, ip netip.Addr, err error) {
	if strings.HasPrefix(host, "[") || strings.HasSuffix(host, "]") {
		if len(host) < 2 || host[0] != '[' || host[len(host)-1] != ']' {
			return "", netip.Addr{}, errors.New("unbalanced brackets")
		}
		ip, err = parseIP(host[1:len(host)-1], true)
	} else if ip, err = parseIP(host, false); err == errNotIP {
		if name, err = normalizeName(host); err != nil {
			return "", netip.Addr{}, err
		}
		return name, netip.Addr{}, nil
	}
	if err != nil {
		return "", netip.Addr{}, err
	}
	return ip.String(), ip, nil
}

// errNotIP says that a host is not an IP address at all.
var errNotIP = errors.New("not an IP address")

// parseIP parses an IP address without a zone; bracketed says it was
// written in brackets, which only IPv6 may be. It returns errNotIP for an
// unbracketed host that is not an address at all.
func parseIP(s string, bracketed bool) (netip.Addr, error) {
	ip, err := netip.ParseAddr(s)
	switch {
	case err != nil && bracketed, err == nil && bracketed && !ip.Is6():
		return netip.Addr{}, errors.New("brackets must hold an IPv6 address")
	case err != nil:
		return netip.Addr{}, errNotIP
	case ip.Zone() != "":
		return netip.Addr{}, errors.New("IPv6 zones are not allowed")
	}
	return ip, nil
}

// normalizeName checks a DNS name and returns it in lower case without one
// trailing dot; see NormalizeHost.
func normalizeName(host string) (string, error) {
	name := strings.TrimSuffix(host, ".")
	if name == "" {
		return "", errors.New("empty name")
	}
	if len(name) > MaxNameLen {
		return "", errors.New("name longer than 253 bytes")
	}
	var lower []byte // a lower-case copy, made at the first upper-case letter
	start := 0       // where the current label starts
	for i := 0; i <= len(name); i++ {
		if i < len(name) && name[i] != '.' {
			switch c := name[i]; {
			case 'A' <= c && c <= 'Z':
				if lower == nil {
					lower = []byte(name)
				}
				lower[i] = c + 'a' - 'A'
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_':
			case c >= 0x80:
				return "", errors.New("non-ASCII name (write it in its xn-- form)")
			default:
				return "", fmt.Errorf("invalid character %q", rune(c))
			}
			continue
		}
		label := name[start:i]
		switch {
		case label == "":
			return "", errors.New("empty label")
		case len(label) > MaxLabelLen:
			return "", errors.New("label longer than 63 bytes")
		case label[0] == '-' || label[len(label)-1] == '-':
			return "", fmt.Errorf("label %q starts or ends with '-'", label)
		}
		if i < len(name) {
			start = i + 1
		}
	}
	if lower != nil {
		name = string(lower)
	}
	switch last := name[start:]; {
	case allDigits(last):
		return "", fmt.Errorf("%q is neither an IP address nor a host name: its last label is all digits, which some resolvers read as IPv4", name)
	case hexNumber(last):
		return "", fmt.Errorf("%q is neither an IP address nor a host name: its last label is a hex number, which some resolvers read as IPv4", name)
	}
	return name, nil
}

// allDigits reports whether s is one or more ASCII digits.
func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// hexNumber reports whether the lower-case label s is "0x" and hex
// digits, as inet_aton reads it.
func hexNumber(s string) bool {
	rest, ok := strings.CutPrefix(s, "0x")
	if !ok {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
