package policy

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Network modes, as the config file and --network spell them.
const (
	// NetworkDeny gives the sandbox no network at all. It is the default.
	NetworkDeny = "deny"
	// NetworkAllowAll lets the sandbox reach any public host through moat's
	// proxy.
	NetworkAllowAll = "allow-all"
	// NetworkAllowList lets the sandbox reach only the hosts that
	// [Network.AllowDomains] names.
	NetworkAllowList = "allow-list"
)

// RotateDaily is the only value of audit-rotate: one audit file a day.
const RotateDaily = "daily"

// Network is the checked network settings of a merged configuration, to
// become a moat.NetworkPolicy. The zero value denies all network access.
type Network struct {
	// Mode is NetworkDeny, NetworkAllowAll or NetworkAllowList; empty
	// means NetworkDeny.
	Mode string
	// AllowDomains lists the host patterns of an allow list, each a host
	// name, "*." and a domain (any subdomain, not the domain itself), or an
	// IP address, optionally with ":port". They are lower-case, without a
	// trailing dot. Nil outside NetworkAllowList.
	AllowDomains []string
	// AllowLocal lists the private, loopback or link-local address ranges
	// that the proxy may dial although it refuses them by default, as
	// canonical CIDR prefixes ("10.0.0.0/8", "192.168.1.5/32"). Nil means
	// none.
	AllowLocal []string
	// AuditLog is the file that receives one JSON line per network
	// decision. Empty means no audit log. It is never set with
	// NetworkDeny, where no proxy runs and nothing would be recorded.
	AuditLog string
	// AuditRotate is RotateDaily to start a new audit file each day, or
	// empty for one file.
	AuditRotate string
}

// ParseNetworkMode checks a network mode: deny, allow-all or allow-list.
// Its error says only what is wrong.
func ParseNetworkMode(s string) (string, error) {
	switch s {
	case NetworkDeny, NetworkAllowAll, NetworkAllowList:
		return s, nil
	}
	return "", errors.New("want deny, allow-all or allow-list")
}

// ParseAuditRotate checks an audit rotation: only "daily". Its error says
// only what is wrong.
func ParseAuditRotate(s string) (string, error) {
	if s != RotateDaily {
		return "", errors.New(`want "daily"`)
	}
	return s, nil
}

// maxHostLen is the longest DNS name.
const maxHostLen = 253

// errNotHost rejects what looks like a URL or a path.
var errNotHost = errors.New("want a host, *.domain, IP address or CIDR prefix, optionally with :PORT, not a URL or path")

// ParseDomain checks one allow-list pattern and returns it normalized. A
// pattern is a host name such as example.com (lower-cased, without a
// trailing dot), a wildcard *.example.com (any subdomain, at any depth, but
// not example.com itself), an IP address or a CIDR prefix without host
// bits, each optionally followed by ":PORT". An IPv6 address or prefix
// takes brackets to carry a port: [::1]:8080. What it accepts,
// moat.AllowList accepts too. Its error says only what is wrong.
func ParseDomain(s string) (string, error) {
	switch {
	case s == "":
		return "", errors.New("empty pattern")
	case strings.IndexByte(s, '%') >= 0:
		return "", errors.New("an address with a zone cannot be allowed")
	case strings.Contains(s, "://") || strings.IndexByte(s, '@') >= 0:
		return "", errNotHost
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c == 0x7f {
			return "", fmt.Errorf("invalid character %q", rune(c))
		}
	}
	host, port, bracketed, err := splitPort(s)
	if err != nil {
		return "", err
	}
	var out string
	var v6 bool
	if strings.IndexByte(host, '/') >= 0 {
		p, err := netip.ParsePrefix(host)
		switch {
		case err != nil:
			return "", errNotHost
		case bracketed && !p.Addr().Is6():
			return "", errors.New("brackets must hold an IPv6 address or prefix")
		case p != p.Masked():
			return "", fmt.Errorf("prefix %s has host bits set (did you mean %s?)", host, p.Masked())
		}
		out, v6 = p.String(), p.Addr().Is6()
	} else if a, err := netip.ParseAddr(host); err == nil {
		if bracketed && !a.Is6() {
			return "", errors.New("brackets must hold an IPv6 address or prefix")
		}
		out, v6 = a.String(), a.Is6()
	} else if bracketed {
		return "", fmt.Errorf("%q is not an IPv6 address", host)
	} else if out, err = hostPattern(host); err != nil {
		return "", err
	}
	if port == "" {
		return out, nil
	}
	if v6 {
		out = "[" + out + "]"
	}
	return out + ":" + port, nil
}

// splitPort splits a pattern into its host and its port, "" for none. A
// bracketed host is IPv6; more than one colon without brackets is an IPv6
// address or prefix without a port.
func splitPort(s string) (host, port string, bracketed bool, err error) {
	switch {
	case s[0] == '[':
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", "", false, errors.New("missing ] after the IPv6 address")
		}
		host, bracketed = s[1:end], true
		if rest := s[end+1:]; rest != "" {
			var ok bool
			if port, ok = strings.CutPrefix(rest, ":"); !ok {
				return "", "", false, errors.New("want [IPv6]:PORT")
			}
			if port == "" {
				return "", "", false, errors.New(`port "": want 1 through 65535`)
			}
		}
	case strings.Count(s, ":") == 1:
		host, port, _ = strings.Cut(s, ":")
		if port == "" {
			return "", "", false, errors.New(`port "": want 1 through 65535`)
		}
	default:
		host = s
	}
	if port != "" {
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil || n == 0 || !isDigits(port) {
			return "", "", false, fmt.Errorf("port %q: want 1 through 65535", port)
		}
		port = strconv.FormatUint(n, 10)
	}
	return host, port, bracketed, nil
}

// hostPattern checks a host name, possibly with a leading "*.", and
// returns it lower-cased without a trailing dot.
func hostPattern(host string) (string, error) {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "*" {
		return "", errors.New(`"*" alone matches every host; use network allow-all`)
	}
	name, wild := strings.CutPrefix(host, "*.")
	if err := checkHostName(name); err != nil {
		return "", err
	}
	if wild {
		return "*." + name, nil
	}
	return name, nil
}

// checkHostName checks a lower-case DNS name without a trailing dot:
// labels of letters, digits, '-' and '_', 1 to 63 bytes each, not starting
// or ending with '-', the last not all digits, so that shorthand IPv4
// forms such as 127.1 are never taken for names.
func checkHostName(name string) error {
	if name == "" {
		return errors.New("empty host name")
	}
	if len(name) > maxHostLen {
		return errors.New("host name longer than 253 bytes")
	}
	labels := strings.Split(name, ".")
	for _, label := range labels {
		if label == "" {
			return errors.New("empty label in the host name")
		}
		if len(label) > 63 {
			return fmt.Errorf("label %q longer than 63 bytes", label)
		}
		if label[0] == '-' || label[len(label)-1] == '-' {
			return fmt.Errorf("label %q starts or ends with '-'", label)
		}
		for i := 0; i < len(label); i++ {
			switch c := label[i]; {
			case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_':
			case c == '*':
				return errors.New("a wildcard may only lead, as in *.example.com")
			case c >= 0x80:
				return errors.New("non-ASCII name; write it in its xn-- form")
			default:
				return fmt.Errorf("%q is not allowed in a host name", c)
			}
		}
	}
	if isDigits(labels[len(labels)-1]) {
		return fmt.Errorf("%q is neither an IP address nor a host name", name)
	}
	return nil
}

// ParseLocal checks an allow-local entry, a CIDR prefix or a single IP
// address (a /32 or /128), and returns it as a canonical prefix: host bits
// cleared and an IPv4-mapped IPv6 form written as IPv4. Its error says only
// what is wrong.
func ParseLocal(s string) (string, error) {
	var p netip.Prefix
	if a, err := netip.ParseAddr(s); err == nil {
		if a.Zone() != "" {
			return "", errors.New("an address with a zone cannot be allowed")
		}
		a = a.Unmap()
		p = netip.PrefixFrom(a, a.BitLen())
	} else {
		p, err = netip.ParsePrefix(s)
		if err != nil {
			return "", errors.New("want a CIDR prefix like 10.0.0.0/8 or an IP address")
		}
		if a := p.Addr(); a.Is4In6() {
			if p.Bits() < 96 {
				return "", errors.New("an IPv4-mapped prefix must be /96 or longer")
			}
			p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
		}
	}
	return p.Masked().String(), nil
}
