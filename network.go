package moat

import (
	"context"
	"net/netip"

	"github.com/moat-sandbox/moat/internal/hostpattern"
)

// NetworkRequest is one connection that a sandboxed process asks the
// sandbox's proxy to open. The zero value is a request for no host, which
// every policy in this package denies.
type NetworkRequest struct {
	// Host is the destination as the client named it, normalized: a
	// lower-case DNS name without a trailing dot, or an IP address in its
	// canonical form (IPv6 without brackets, e.g. "::1"). The proxy has not
	// resolved it yet; a name is resolved only after the policy allows it.
	Host string

	// Port is the destination TCP port, 1 through 65535.
	Port int

	// Protocol says how the client asked: "http" (a plain HTTP/1.1 forward
	// request), "connect" (an HTTP CONNECT tunnel) or "socks5". Empty means
	// unknown, as in a test.
	Protocol string

	// Sandbox is the sandbox whose process asked. It is nil when a policy is
	// called outside a sandbox, as in a test.
	Sandbox *Sandbox
}

// NetworkDecision is a policy's verdict on one [NetworkRequest]. The zero
// value denies without a reason.
type NetworkDecision struct {
	// Allow lets the proxy open the connection, subject to its refusal of
	// local addresses (see ExplicitIP). False refuses it.
	Allow bool

	// Reason says why, in a few words; it is written to the audit log.
	// Empty means no reason was given.
	Reason string

	// ExplicitIP says that the request names an IP address that the policy
	// lists explicitly (an IP or CIDR entry of [AllowList]), so the proxy's
	// refusal of loopback, private, link-local and similar addresses does
	// not apply to it. False means that refusal applies, as it does to every
	// name, whatever it resolves to.
	ExplicitIP bool
}

// NetworkPolicy decides, per connection, what a sandbox may reach. A nil
// NetworkPolicy in [Config.Network] means [DenyAll].
//
// Every policy other than one that denies everything runs a proxy on the
// host for the sandbox (HTTP forward, CONNECT and SOCKS5), and the proxy asks
// Decide about each request before it resolves the name. Decide is called
// from many goroutines at once and must be safe for that. ctx is cancelled
// when the client goes away.
//
// A policy that refuses every connection may also have a method
//
//	DeniesAll() bool
//
// that returns true; then no proxy runs at all and the kernel alone refuses
// the network (see [NetworkDeniesAll]). A nil NetworkPolicy is [DenyAll].
type NetworkPolicy interface {
	Decide(ctx context.Context, r NetworkRequest) NetworkDecision
}

// NetworkDeniesAll reports whether p refuses every connection, so that the
// sandbox needs no proxy: true for nil, for [DenyAll], for an empty
// [AllowList], for an [Audited] wrapper of such a policy, and for any
// policy with a DeniesAll method that returns true.
func NetworkDeniesAll(p NetworkPolicy) bool {
	if p == nil {
		return true
	}
	d, ok := p.(interface{ DeniesAll() bool })
	return ok && d.DeniesAll()
}

// DenyAll returns the default policy: no connection at all. No proxy runs;
// with a network namespace the sandbox sees only a loopback interface, and
// without one the kernel refuses TCP connects and every other socket.
func DenyAll() NetworkPolicy { return denyAll{} }

type denyAll struct{}

func (denyAll) Decide(context.Context, NetworkRequest) NetworkDecision {
	return NetworkDecision{Reason: "network access is disabled"}
}

// DeniesAll returns true.
func (denyAll) DeniesAll() bool { return true }

// AllowAll returns a policy that lets the sandbox connect to any host on any
// port through the proxy. The proxy still refuses local addresses (loopback,
// private networks, link-local, cloud metadata and the like) unless
// [Config.AllowLocal] lists them.
func AllowAll() NetworkPolicy { return allowAll{} }

type allowAll struct{}

func (allowAll) Decide(context.Context, NetworkRequest) NetworkDecision {
	return NetworkDecision{Allow: true, Reason: "every host is allowed"}
}

// HostNetwork returns a policy that leaves the sandbox on the host's
// network: no network namespace and no proxy, so every connection the
// host could make is allowed and none is audited. It is what a policy
// document's "network": "host" asks for, and [Sandbox.Report] says so
// plainly. Choose it explicitly; the zero Config denies all network.
func HostNetwork() NetworkPolicy { return hostNetwork{} }

type hostNetwork struct{}

func (hostNetwork) Decide(context.Context, NetworkRequest) NetworkDecision {
	return NetworkDecision{Allow: true, Reason: "host network"}
}

// isHostNetwork reports whether p is [HostNetwork].
func isHostNetwork(p NetworkPolicy) bool {
	_, ok := p.(hostNetwork)
	return ok
}

// Custom returns a policy that asks fn about every connection. fn gets the
// request's context, host, port, protocol and sandbox in r, and returns
// whether to allow it and why; an empty reason is recorded as "allowed by
// custom policy" or "denied by custom policy". fn is called from many
// goroutines at once. The proxy's refusal of local addresses applies to
// whatever fn allows; implement [NetworkPolicy] directly to return
// [NetworkDecision.ExplicitIP]. Custom panics if fn is nil.
func Custom(fn func(ctx context.Context, r NetworkRequest) (allow bool, reason string)) NetworkPolicy {
	if fn == nil {
		panic("moat: Custom: nil function")
	}
	return customPolicy{fn: fn}
}

type customPolicy struct {
	fn func(context.Context, NetworkRequest) (bool, string)
}

func (c customPolicy) Decide(ctx context.Context, r NetworkRequest) NetworkDecision {
	allow, reason := c.fn(ctx, r)
	if reason == "" {
		reason = "denied by custom policy"
		if allow {
			reason = "allowed by custom policy"
		}
	}
	return NetworkDecision{Allow: allow, Reason: reason}
}

// networkPolicy returns the effective policy of cfg.
func networkPolicy(cfg *Config) NetworkPolicy {
	if cfg.Network == nil {
		return DenyAll()
	}
	return cfg.Network
}

// checkNetworkConfig validates the network fields of cfg.
func checkNetworkConfig(cfg *Config) error {
	for i, p := range cfg.AllowLocal {
		if !p.IsValid() {
			return errorf("allow local #%d: invalid prefix %q", i+1, p.String())
		}
	}
	for _, port := range cfg.DenyTCPConnect {
		if port == 0 {
			return &ConfigError{Field: "deny tcp connect", Value: "0", Problem: "not a port a connection can reach"}
		}
	}
	return nil
}

// allowedLocal reports whether cfg.AllowLocal lists ip.
func allowedLocal(cfg *Config, ip netip.Addr) bool {
	for _, p := range cfg.AllowLocal {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// decideNetwork is the proxy's policy hook for sandbox sb, whose Config
// is cfg: it normalizes the host, refuses a malformed host or port, and
// asks the sandbox's policy.
func decideNetwork(ctx context.Context, cfg *Config, sb *Sandbox, protocol, host string, port int) NetworkDecision {
	h, _, err := normalizeHost(host)
	if err != nil {
		return NetworkDecision{Reason: "invalid host"}
	}
	if port < 1 || port > 65535 {
		return NetworkDecision{Reason: "invalid port"}
	}
	return networkPolicy(cfg).Decide(ctx, NetworkRequest{Host: h, Port: port, Protocol: protocol, Sandbox: sb})
}

// normalizeHost returns host in the form of [NetworkRequest.Host]: an IP
// address (bracketed or not) in canonical form, or a DNS name in lower case
// without one trailing dot; ip is valid for an address. The rules are
// those of [hostpattern.NormalizeHost], the one grammar of moat's
// allow-list patterns and proxy: labels of 1 to 63 letters, digits,
// hyphens and underscores that neither start nor end with a hyphen, at
// most 253 bytes in all, a last label that is not a number (so that the
// shorthand IPv4 forms that some resolvers accept, "127.1", "2130706433",
// are never taken for names), and no IPv6 zones.
func normalizeHost(host string) (name string, ip netip.Addr, err error) {
	if name, ip, err = hostpattern.NormalizeHost(host); err != nil {
		return "", netip.Addr{}, errorf("host %q: %w", host, err)
	}
	return name, ip, nil
}
