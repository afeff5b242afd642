package proxy

import (
	"context"
	"net"
	"net/netip"
	"time"
)

// Protocols a Request can arrive by.
const (
	ProtocolHTTP    = "http"    // an absolute-form HTTP/1.1 request
	ProtocolConnect = "connect" // an HTTP CONNECT tunnel
	ProtocolSOCKS5  = "socks5"  // a SOCKS5 CONNECT
)

// Request is what the sandbox asked to reach. The zero value names no
// destination; the proxy never hands one to a policy.
type Request struct {
	// Protocol is ProtocolHTTP, ProtocolConnect or ProtocolSOCKS5.
	Protocol string
	// Host is the destination as the client named it, normalized: lower
	// case, no trailing dot, an IP literal in its canonical text form and
	// IPv6 without brackets or zone.
	Host string
	// Port is the destination TCP port, 1 to 65535.
	Port int
}

// Decision is a policy's verdict on a Request. The zero value denies with
// the reason "denied by policy".
type Decision struct {
	// Allow lets the request proceed to address checks and the dial.
	Allow bool
	// Reason is one line saying why, such as "host not in allow-list". It
	// is shown to the client when the request is denied and recorded in
	// the audit log either way. Empty means "denied by policy" for a
	// denial and nothing for an allowed request.
	Reason string
	// ExplicitIP says that the policy named this IP literal, or a CIDR
	// containing it, itself, so the refusal of local addresses does not
	// apply. It is honoured only when Request.Host is an IP literal; for a
	// name it is ignored, since the name's addresses come from DNS and not
	// from the policy. False keeps local addresses refused.
	ExplicitIP bool
}

// Record is one audited decision, handed to Config.Audit before the
// connection proceeds. The zero value records nothing useful.
type Record struct {
	// Time is when the decision was made.
	Time time.Time
	// Protocol, Host and Port are the Request's.
	Protocol string
	Host     string
	Port     int
	// IP is the address the proxy dials (or, for a refusal by address,
	// the address that was refused); empty when the name was never
	// resolved. When a name resolves to several addresses and the dial
	// to IP fails, the others, all checked as well, are tried in order.
	IP string
	// Allowed is true when the connection proceeds.
	Allowed bool
	// Reason is the policy's reason, or why the proxy refused on its own
	// (an address refusal, a failed resolution, too many connections).
	Reason string
	// ConnLimit is true for a connection refused because the sandbox
	// already had Config.MaxConns connections open to the proxy; Protocol,
	// Host, Port and IP are then empty, since nothing was read from it.
	// False for every other record.
	ConnLimit bool
}

// Resolver resolves host names to addresses. *net.Resolver satisfies it; a
// nil Resolver in [Config] means net.DefaultResolver.
type Resolver interface {
	// LookupNetIP looks up host; network is always "ip".
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config configures a Server. Check is required; every other field has a
// working zero value.
type Config struct {
	// PolicyName names the policy in denial messages, such as
	// "allow-list". Empty leaves it out.
	PolicyName string

	// Check decides every request. It is required. It may be called from
	// many goroutines at once and is given a context that is cancelled
	// when the Server closes.
	Check func(ctx context.Context, r Request) Decision

	// Audit, when set, is called with every final decision, allowed or
	// denied (refusals of local addresses and failed resolutions
	// included), before the proxy dials: once per CONNECT or SOCKS5
	// connection and once per forwarded HTTP request, including requests
	// that reuse a kept upstream connection; and once per connection
	// refused past MaxConns (Record.ConnLimit). An error refuses the
	// connection with the reason "audit log write failed", or "audit log
	// full" when it is ErrAuditFull. It may be called from many
	// goroutines at once. Nil audits nothing. Requests refused before a
	// decision (malformed requests, failed authentication) are not
	// audited.
	Audit func(Record) error

	// Resolver resolves host names. Nil means net.DefaultResolver.
	Resolver Resolver

	// AllowLocal lists local destinations that are allowed anyway (a dev
	// server on the host, say). An address inside any prefix is not
	// refused as local. Nil allows none.
	AllowLocal []netip.Prefix

	// Credential, when not empty, makes clients authenticate: HTTP and
	// CONNECT with "Proxy-Authorization: Basic" for the user "moat" and
	// this password, SOCKS5 with RFC 1929 username/password (the same
	// pair). Empty asks for no authentication, which is right only where
	// nothing but the sandbox can reach the listener (inside its network
	// namespace).
	Credential string

	// Dial opens upstream connections. network is "tcp" and addr is
	// always a checked IP and port ("192.0.2.1:80", "[2001:db8::1]:443"),
	// never a name. Nil means a net.Dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)

	// HostAddrs returns the host's own interface addresses, which are
	// refused like loopback. It is called on every address check. Nil
	// means net.InterfaceAddrs, cached for at most a second.
	HostAddrs func() []netip.Addr

	// HeaderTimeout bounds the time a client may take to send a request's
	// headers or the SOCKS5 handshake. Zero means 10 seconds.
	HeaderTimeout time.Duration

	// IdleTimeout bounds the time a keep-alive client connection may sit
	// between requests. Zero means 2 minutes.
	IdleTimeout time.Duration

	// DialTimeout bounds name resolution plus the upstream dial. Zero
	// means 30 seconds.
	DialTimeout time.Duration

	// MaxHeaderBytes bounds the size of a request line plus headers, and
	// separately that of an upstream response's status line plus headers
	// (1xx responses included). Zero means 64 KiB.
	MaxHeaderBytes int

	// MaxConns bounds the client connections the Server serves at once:
	// keep-alive connections idle between requests, tunnels and SOCKS5
	// relays all count. Each client connection holds at most one upstream
	// connection at a time, so upstream connections are bounded by the
	// same number, and the proxy's descriptors by twice it. A connection
	// past the bound is refused as soon as it is accepted: it is audited
	// (a Record with ConnLimit set), answered with a one-line 503 when it
	// speaks HTTP (a SOCKS5 client gets "no acceptable method"), and
	// closed. Zero means 256.
	MaxConns int
}

// Defaults for the zero values of Config's limits.
const (
	defaultHeaderTimeout  = 10 * time.Second
	defaultIdleTimeout    = 2 * time.Minute
	defaultDialTimeout    = 30 * time.Second
	defaultMaxHeaderBytes = 64 << 10
	defaultMaxConns       = 256
)

// validate checks cfg and fills in defaults.
func (cfg *Config) validate() error {
	if cfg.Check == nil {
		return errorf("proxy config: Check is required")
	}
	for _, p := range cfg.AllowLocal {
		if !p.IsValid() {
			return errorf("proxy config: AllowLocal: %q is not a valid prefix", p.String())
		}
	}
	if cfg.HeaderTimeout < 0 || cfg.IdleTimeout < 0 || cfg.DialTimeout < 0 || cfg.MaxHeaderBytes < 0 || cfg.MaxConns < 0 {
		return errorf("proxy config: timeouts, MaxHeaderBytes and MaxConns must not be negative")
	}
	if cfg.HeaderTimeout == 0 {
		cfg.HeaderTimeout = defaultHeaderTimeout
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = defaultIdleTimeout
	}
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = defaultDialTimeout
	}
	if cfg.MaxHeaderBytes == 0 {
		cfg.MaxHeaderBytes = defaultMaxHeaderBytes
	}
	if cfg.MaxConns == 0 {
		cfg.MaxConns = defaultMaxConns
	}
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	if cfg.Dial == nil {
		d := &net.Dialer{}
		cfg.Dial = d.DialContext
	}
	if cfg.HostAddrs == nil {
		cfg.HostAddrs = newInterfaceCache(time.Second).addrs
	}
	return nil
}
