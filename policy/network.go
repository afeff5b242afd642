package policy

import (
	"errors"
	"net/netip"

	"github.com/moat-sandbox/moat/internal/hostpattern"
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

// ParseNetworkMode checks a network mode: deny, allow-all or allow-list,
// or heel's allow, which it returns as allow-all. Its error says only what
// is wrong.
func ParseNetworkMode(s string) (string, error) {
	switch s {
	case NetworkDeny, NetworkAllowAll, NetworkAllowList:
		return s, nil
	case NetworkAllow: // heel.go
		return NetworkAllowAll, nil
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

// ParseDomain checks one allow-list pattern and returns it normalized. A
// pattern is a host name such as example.com (lower-cased, without a
// trailing dot), a wildcard *.example.com (any subdomain, at any depth, but
// not example.com itself), an IP address or a CIDR prefix without host
// bits (a single-address prefix such as 192.0.2.1/32 normalizes to the
// address), each optionally followed by ":PORT", 1 through 65535 without
// leading zeros. An IPv6 address or prefix takes brackets to carry a port:
// [::1]:8080. Name labels must not start or end with '-', and the last
// label must not be a number. It is the grammar of moat.AllowList, which
// accepts exactly what ParseDomain accepts. Its error says only what is
// wrong.
func ParseDomain(s string) (string, error) {
	p, err := hostpattern.Parse(s)
	if err != nil {
		return "", err
	}
	return p.String(), nil
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
