package proxy

import (
	"net/netip"
)

// This file classifies destination addresses: the proxy refuses to dial an
// address that reaches the host itself, its private networks or a cloud
// metadata service, unless the policy allowed that address explicitly.

// addrClass is a range of refused addresses and how to describe it.
type addrClass struct {
	prefix netip.Prefix
	what   string // completes "X is ...", e.g. "a loopback address"
}

// Ordered most specific first: the first match describes the address.
var refusedV4 = []addrClass{
	{netip.MustParsePrefix("0.0.0.0/32"), "an unspecified address"},
	{netip.MustParsePrefix("0.0.0.0/8"), `a "this network" address`},
	{netip.MustParsePrefix("10.0.0.0/8"), "a private address"},
	{netip.MustParsePrefix("100.100.100.200/32"), "a cloud metadata address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a shared (CGNAT) address"},
	{netip.MustParsePrefix("127.0.0.0/8"), "a loopback address"},
	{netip.MustParsePrefix("169.254.169.254/32"), "a cloud metadata address"},
	{netip.MustParsePrefix("169.254.0.0/16"), "a link-local address"},
	{netip.MustParsePrefix("172.16.0.0/12"), "a private address"},
	{netip.MustParsePrefix("192.0.0.192/32"), "a cloud metadata address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "an IETF protocol assignment address"},
	{netip.MustParsePrefix("192.168.0.0/16"), "a private address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address"},
	{netip.MustParsePrefix("224.0.0.0/4"), "a multicast address"},
	{netip.MustParsePrefix("255.255.255.255/32"), "the broadcast address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address"},
}

var refusedV6 = []addrClass{
	{netip.MustParsePrefix("::/128"), "an unspecified address"},
	{netip.MustParsePrefix("::1/128"), "a loopback address"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a local-use NAT64 address"},
	{netip.MustParsePrefix("100::/64"), "a discard-only address"},
	{netip.MustParsePrefix("fd00:ec2::254/128"), "a cloud metadata address"},
	{netip.MustParsePrefix("fc00::/7"), "a private (unique local) address"},
	{netip.MustParsePrefix("fe80::/10"), "a link-local address"},
	{netip.MustParsePrefix("fec0::/10"), "a site-local address"},
	{netip.MustParsePrefix("ff00::/8"), "a multicast address"},
}

// IPv6 ranges that embed an IPv4 address.
var (
	v4CompatPrefix = netip.MustParsePrefix("::/96")
	nat64Prefix    = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour      = netip.MustParsePrefix("2002::/16")
	teredoPrefix   = netip.MustParsePrefix("2001::/32")
)

// classify says why a is refused as a destination, completing "a is ...";
// it returns "" for an address the proxy may dial. It does not know about
// the host's own addresses or Config.AllowLocal.
func classify(a netip.Addr) string {
	a = a.WithZone("")
	if a.Is4() {
		return lookupClass(refusedV4, a)
	}
	if !a.Is6() {
		return "an invalid address"
	}
	if a.Is4In6() {
		return embedded("an IPv4-mapped address", a.Unmap(), false)
	}
	if what := lookupClass(refusedV6, a); what != "" {
		return what
	}
	b := a.As16()
	switch {
	case v4CompatPrefix.Contains(a):
		// Deprecated since RFC 4291 and never needed: refused even
		// when the embedded address is public.
		return embedded("an IPv4-compatible address", v4At(b, 12), true)
	case nat64Prefix.Contains(a):
		return embedded("a NAT64 address", v4At(b, 12), false)
	case sixToFour.Contains(a):
		return embedded("a 6to4 address", v4At(b, 2), false)
	case teredoPrefix.Contains(a):
		if what := embedded("a Teredo address", v4At(b, 4), false); what != "" {
			return what
		}
		client := v4At(b, 12).As4()
		for i := range client {
			client[i] ^= 0xff
		}
		return embedded("a Teredo address", netip.AddrFrom4(client), false)
	}
	return ""
}

// lookupClass returns the description of the first class containing a.
func lookupClass(classes []addrClass, a netip.Addr) string {
	for _, c := range classes {
		if c.prefix.Contains(a) {
			return c.what
		}
	}
	return ""
}

// embedded describes an IPv6 address of kind that embeds v4: refused when
// v4 is, or always when refuseAll is set.
func embedded(kind string, v4 netip.Addr, refuseAll bool) string {
	what := lookupClass(refusedV4, v4)
	switch {
	case what != "":
		return kind + " embedding " + v4.String() + ", " + what
	case refuseAll:
		return kind + " (deprecated)"
	}
	return ""
}

// v4At reads the IPv4 address at b[i:i+4].
func v4At(b [16]byte, i int) netip.Addr {
	return netip.AddrFrom4([4]byte{b[i], b[i+1], b[i+2], b[i+3]})
}

// inPrefixes reports whether a, or its unmapped IPv4 form, is inside any
// of prefixes.
func inPrefixes(a netip.Addr, prefixes []netip.Prefix) bool {
	a = a.WithZone("")
	u := a.Unmap()
	for _, p := range prefixes {
		if p.Contains(a) || p.Contains(u) {
			return true
		}
	}
	return false
}

// isHostAddr reports whether a is one of the host's own addresses.
func isHostAddr(a netip.Addr, host []netip.Addr) bool {
	u := a.WithZone("").Unmap()
	for _, h := range host {
		if h.WithZone("").Unmap() == u {
			return true
		}
	}
	return false
}
