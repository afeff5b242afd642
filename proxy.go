package moat

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/netip"
	"strconv"

	"github.com/moat-sandbox/moat/internal/auditlog"
	"github.com/moat-sandbox/moat/internal/proxy"
	"github.com/moat-sandbox/moat/internal/refusal"
)

// netProxy is a sandbox's policy proxy: one per sandbox, serving only the
// listeners that reach that sandbox.
type netProxy struct {
	srv   *proxy.Server
	port  int
	token string // the credential every client presents
	// refused bounds the destinations recorded as refusals.
	refused refusal.Budget
	// audit writes the proxy's decisions within the sandbox's bounds.
	audit *auditlog.Throttle
}

// newNetProxy creates sandbox s's proxy unless its policy denies all, in
// which case no proxy runs (nil) and the kernel refuses every connection.
// The engine hands it its listeners once they exist.
func newNetProxy(s *Sandbox) (*netProxy, error) {
	if NetworkDeniesAll(s.cfg.Network) || isHostNetwork(s.cfg.Network) {
		return nil, nil // network.go, HostNetwork: no proxy on the host's network
	}
	var tok [16]byte
	if _, err := rand.Read(tok[:]); err != nil {
		return nil, errorf("network proxy: %w", err)
	}
	p := &netProxy{token: hex.EncodeToString(tok[:]), audit: newAuditThrottle(s.id, &s.cfg)}
	srv, err := proxy.New(proxy.Config{
		PolicyName: policyName(s.cfg.Network),
		Check: func(ctx context.Context, r proxy.Request) proxy.Decision {
			d := decideNetwork(ctx, &s.cfg, s, r.Protocol, r.Host, r.Port)
			return proxy.Decision{Allow: d.Allow, Reason: d.Reason, ExplicitIP: d.ExplicitIP}
		},
		Audit: func(r proxy.Record) error {
			ip, _ := netip.ParseAddr(r.IP)
			err := p.audit.Record(auditlog.Record{Time: r.Time, Protocol: r.Protocol, Host: r.Host, Port: r.Port,
				IP: ip, Allowed: r.Allowed, Reason: r.Reason})
			switch {
			case isAuditFull(err):
				r.Reason, r.IP = "refused: the audit log holds no more of this sandbox's lines", ""
				s.refused.ProxyRefused(policyName(s.cfg.Network), &p.refused, r)
			case !r.Allowed:
				s.refused.ProxyRefused(policyName(s.cfg.Network), &p.refused, r)
			}
			return err
		},
		AllowLocal: s.cfg.AllowLocal,
		Credential: p.token,
		Resolver:   proxyResolver(s.cfg.Resolver),
	})
	if err != nil {
		return nil, errorf("network proxy: %w", err)
	}
	p.srv = srv
	// A port free on the host now: inside a network namespace any port
	// would do, but without one (or after falling back to none) the proxy
	// listens on the host's loopback, on this same port.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Close()
		return nil, errorf("network proxy: %w", err)
	}
	p.port = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return p, nil
}

// serve starts serving l; it does not block.
func (p *netProxy) serve(l net.Listener) {
	go func() { _ = p.srv.Serve(l) }()
}

// close stops the proxy, then writes the audit counts still pending.
func (p *netProxy) close() {
	if p != nil {
		p.srv.Close()
		p.audit.Close()
	}
}

// proxyEnv are the variables that send a sandbox's clients to its proxy:
// the standard ones in both cases, ALL_PROXY for SOCKS5 with names resolved
// by the proxy, and those npm, yarn and pip read. NO_PROXY keeps the
// sandbox's own loopback direct, for test suites that call their own
// servers. Without a proxy, none is set.
func (p *netProxy) env() []string {
	if p == nil {
		return nil
	}
	hostPort := "moat:" + p.token + "@127.0.0.1:" + strconv.Itoa(p.port)
	httpURL := "http://" + hostPort
	socks := "socks5h://" + hostPort
	noProxy := "localhost,127.0.0.1,::1"
	return []string{
		"HTTP_PROXY=" + httpURL, "HTTPS_PROXY=" + httpURL, "http_proxy=" + httpURL, "https_proxy=" + httpURL,
		"ALL_PROXY=" + socks, "all_proxy=" + socks,
		"NO_PROXY=" + noProxy, "no_proxy=" + noProxy,
		"npm_config_proxy=" + httpURL, "npm_config_https_proxy=" + httpURL,
		"YARN_HTTP_PROXY=" + httpURL, "YARN_HTTPS_PROXY=" + httpURL,
		"PIP_PROXY=" + httpURL, "CARGO_HTTP_PROXY=" + httpURL,
		"GLOBAL_AGENT_HTTP_PROXY=" + httpURL, "GLOBAL_AGENT_NO_PROXY=" + noProxy,
	}
}

// ProxyURL returns the URL of the sandbox's HTTP proxy, credential
// included, or "" when its policy denies all network access and no proxy
// runs.
func (s *Sandbox) ProxyURL() string {
	if s.proxy == nil {
		return ""
	}
	return "http://moat:" + s.proxy.token + "@127.0.0.1:" + strconv.Itoa(s.proxy.port)
}

// policyName names a policy in the proxy's denial messages.
func policyName(p NetworkPolicy) string {
	for {
		switch v := p.(type) {
		case *AuditedPolicy:
			p = v.Policy()
			continue
		case *AllowListPolicy:
			return "allow-list"
		case allowAll:
			return "allow-all"
		case customPolicy:
			return "custom"
		case denyAll, nil:
			return "deny-all"
		}
		return "custom"
	}
}

// proxyResolver is Config.Resolver r for the proxy, or nil for the
// host's: a nil r of Config's type must stay a nil interface.
func proxyResolver(r Resolver) proxy.Resolver {
	if r == nil {
		return nil
	}
	return r
}
