package moat

import (
	"context"
	"strconv"

	"github.com/moat-sandbox/moat/internal/hostpattern"
)

// AllowListPolicy allows connections to the hosts it lists and denies every
// other. Make one with [AllowList]. The zero value lists nothing: it denies
// everything, and so runs no proxy.
type AllowListPolicy struct {
	entries []hostpattern.Pattern
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
// A pattern that is empty, holds a space, a scheme ("http://"), user
// information ("@"), a path or a "*" anywhere but a leading "*.", a name
// label that is empty, longer than 63 bytes or starts or ends with "-", a
// name whose last label is a number ("127.1", "example.0x1f"), an IPv6
// zone, or a port that is not 1 through 65535 written without leading
// zeros is an error that names it. Non-ASCII names must be given in their
// xn-- form. The grammar is the one of the configuration file and the
// command line's --allow-domain.
func AllowList(patterns ...string) (*AllowListPolicy, error) {
	p := &AllowListPolicy{entries: make([]hostpattern.Pattern, 0, len(patterns))}
	for _, s := range patterns {
		e, err := hostpattern.Parse(s)
		if err != nil {
			return nil, errorf("allow list entry %q: %w", s, err)
		}
		p.entries = append(p.entries, e)
	}
	return p, nil
}

// Decide allows r if a pattern matches its host and port; the reason names
// the first pattern that matches. A match by an IP or CIDR pattern sets
// [NetworkDecision.ExplicitIP].
func (p *AllowListPolicy) Decide(_ context.Context, r NetworkRequest) NetworkDecision {
	name, ip, err := hostpattern.NormalizeHost(r.Host)
	if err != nil {
		return NetworkDecision{Reason: "invalid host"}
	}
	if r.Port < 1 || r.Port > 65535 {
		return NetworkDecision{Reason: "invalid port"}
	}
	if p != nil {
		for _, e := range p.entries {
			if e.MatchNormal(name, ip, r.Port) {
				return NetworkDecision{
					Allow:      true,
					Reason:     "matches " + strconv.Quote(e.String()),
					ExplicitIP: e.Kind() == hostpattern.KindPrefix,
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
