package moat

import (
	"bytes"
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestNetworkNormalizeHost(t *testing.T) {
	cases := []struct {
		name, in, want string
		ip             bool
		err            string
	}{
		{"lower case", "Example.COM", "example.com", false, ""},
		{"trailing dot", "example.com.", "example.com", false, ""},
		{"single label", "localhost", "localhost", false, ""},
		{"underscore and hyphen", "_dmarc.my-host.example", "_dmarc.my-host.example", false, ""},
		{"digits in labels", "1.2.3.example", "1.2.3.example", false, ""},
		{"ipv4", "192.0.2.1", "192.0.2.1", true, ""},
		{"ipv6 bare", "2001:DB8:0::1", "2001:db8::1", true, ""},
		{"ipv6 bracketed", "[::1]", "::1", true, ""},
		{"ipv4-mapped stays mapped", "::ffff:127.0.0.1", "::ffff:127.0.0.1", true, ""},
		{"empty", "", "", false, "empty"},
		{"dot", ".", "", false, "empty"},
		{"two trailing dots", "example.com..", "", false, "empty label"},
		{"inner empty label", "a..b", "", false, "empty label"},
		{"space", "a b", "", false, "invalid character"},
		{"slash", "a/b", "", false, "invalid character"},
		{"colon", "example.com:443", "", false, "invalid character"},
		{"percent", "a%2e", "", false, "invalid character"},
		{"nul", "a\x00b", "", false, "invalid character"},
		{"non-ascii", "bücher.de", "", false, "xn--"},
		{"shorthand ipv4", "127.1", "", false, "all digits"},
		{"decimal ipv4", "2130706433", "", false, "all digits"},
		{"hex ipv4", "0x7f.1", "", false, "all digits"},
		{"long label", strings.Repeat("a", 64), "", false, "63"},
		{"long name", strings.Repeat("a.", 127) + "ab", "", false, "253"},
		{"ipv4 in brackets", "[127.0.0.1]", "", false, "IPv6"},
		{"name in brackets", "[localhost]", "", false, "IPv6"},
		{"unbalanced", "[::1", "", false, "brackets"},
		{"zone", "fe80::1%lo", "", false, "zone"},
		{"zone in brackets", "[fe80::1%lo]", "", false, "zone"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ip, err := normalizeHost(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.HasPrefix(err.Error(), "host ") {
					t.Fatalf("normalizeHost(%q) = %q, %v; want an error saying %q", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want || ip.IsValid() != tc.ip {
				t.Fatalf("normalizeHost(%q) = %q, %v, %v; want %q, ip %v", tc.in, got, ip, err, tc.want, tc.ip)
			}
		})
	}
}

// FuzzNetworkHost checks that host normalization never panics, is
// idempotent, and yields only names and addresses that are safe to log and
// to dial.
func FuzzNetworkHost(f *testing.F) {
	for _, s := range []string{"example.com", "EXAMPLE.com.", "[::1]", "::1", "1.2.3.4", "127.1", "", "[", "a..b", "fe80::1%x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		name, ip, err := normalizeHost(host)
		if err != nil {
			return
		}
		again, ip2, err := normalizeHost(name)
		if err != nil || again != name || ip2 != ip {
			t.Fatalf("normalizeHost(%q) = %q, then %q, %v", host, name, again, err)
		}
		if ip.IsValid() {
			if ip.String() != name {
				t.Fatalf("normalizeHost(%q) = %q, ip %v", host, name, ip)
			}
			return
		}
		if _, err := netip.ParseAddr(name); err == nil {
			t.Fatalf("normalizeHost(%q) = name %q that is an address", host, name)
		}
		for _, c := range []byte(name) {
			if !(c == '.' || c == '-' || c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z') {
				t.Fatalf("normalizeHost(%q) = %q with %q", host, name, c)
			}
		}
	})
}

// denier is a user policy that says it denies everything.
type denier struct{ denies bool }

func (denier) Decide(context.Context, NetworkRequest) NetworkDecision { return NetworkDecision{} }
func (d denier) DeniesAll() bool                                      { return d.denies }

func TestNetworkDeniesAll(t *testing.T) {
	log := newAuditLogWriter(&bytes.Buffer{}, time.Now)
	empty, _ := AllowList()
	some, _ := AllowList("example.com")
	custom := Custom(func(context.Context, NetworkRequest) (bool, string) { return false, "" })
	cases := []struct {
		name string
		p    NetworkPolicy
		want bool
	}{
		{"nil", nil, true},
		{"DenyAll", DenyAll(), true},
		{"AllowAll", AllowAll(), false},
		{"empty allow list", empty, true},
		{"allow list", some, false},
		{"Custom", custom, false},
		{"user policy that denies all", denier{true}, true},
		{"user policy that does not", denier{false}, false},
		{"Audited DenyAll", Audited(DenyAll(), log), true},
		{"Audited nil", Audited(nil, log), true},
		{"Audited AllowAll", Audited(AllowAll(), log), false},
		{"Audited empty allow list", Audited(empty, log), true},
		{"Audited Custom", Audited(custom, log), false},
		{"Audited twice DenyAll", Audited(Audited(DenyAll(), log), log), true},
		{"Audited twice AllowAll", Audited(Audited(AllowAll(), log), log), false},
		{"zero AuditedPolicy", &AuditedPolicy{}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := NetworkDeniesAll(tc.p); got != tc.want {
				t.Errorf("NetworkDeniesAll = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNetworkBuiltinDecisions(t *testing.T) {
	log := newAuditLogWriter(&bytes.Buffer{}, time.Now)
	r := NetworkRequest{Host: "example.com", Port: 443, Protocol: "connect"}
	cases := []struct {
		name string
		p    NetworkPolicy
		want NetworkDecision
	}{
		{"DenyAll", DenyAll(), NetworkDecision{Reason: "network access is disabled"}},
		{"AllowAll", AllowAll(), NetworkDecision{Allow: true, Reason: "every host is allowed"}},
		{"Audited AllowAll", Audited(AllowAll(), log), NetworkDecision{Allow: true, Reason: "every host is allowed"}},
		{"Audited nil", Audited(nil, log), NetworkDecision{Reason: "network access is disabled"}},
		{"zero AuditedPolicy", &AuditedPolicy{}, NetworkDecision{Reason: "network access is disabled"}},
		{"Custom allow, no reason", Custom(func(context.Context, NetworkRequest) (bool, string) { return true, "" }),
			NetworkDecision{Allow: true, Reason: "allowed by custom policy"}},
		{"Custom deny, no reason", Custom(func(context.Context, NetworkRequest) (bool, string) { return false, "" }),
			NetworkDecision{Reason: "denied by custom policy"}},
		{"Custom reason", Custom(func(context.Context, NetworkRequest) (bool, string) { return false, "weekend" }),
			NetworkDecision{Reason: "weekend"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.Decide(context.Background(), r); got != tc.want {
				t.Errorf("Decide = %+v, want %+v", got, tc.want)
			}
		})
	}
}

type ctxKey struct{}

func TestNetworkCustomGetsAllFields(t *testing.T) {
	sb := &Sandbox{id: "sb1"}
	var got NetworkRequest
	var gotValue any
	p := Custom(func(ctx context.Context, r NetworkRequest) (bool, string) {
		got, gotValue = r, ctx.Value(ctxKey{})
		return r.Host == "example.com" && r.Port == 8443, "checked " + r.Protocol
	})
	ctx := context.WithValue(context.Background(), ctxKey{}, "v")
	want := NetworkRequest{Host: "example.com", Port: 8443, Protocol: "socks5", Sandbox: sb}
	d := p.Decide(ctx, want)
	if got != want || gotValue != "v" {
		t.Fatalf("fn got %+v and context value %v, want %+v and v", got, gotValue, want)
	}
	if !d.Allow || d.Reason != "checked socks5" || d.ExplicitIP {
		t.Fatalf("Decide = %+v", d)
	}
}

func TestNetworkConstructorsPanicOnNil(t *testing.T) {
	cases := []struct {
		name string
		fn   func()
	}{
		{"Custom", func() { Custom(nil) }},
		{"Audited", func() { Audited(AllowAll(), nil) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			tc.fn()
		})
	}
}

func TestNetworkAuditedAccessors(t *testing.T) {
	log := newAuditLogWriter(&bytes.Buffer{}, time.Now)
	inner := AllowAll()
	a := Audited(inner, log)
	if a.Log() != log || a.Policy() != inner {
		t.Errorf("Log() = %p, Policy() = %v", a.Log(), a.Policy())
	}
	var nilA *AuditedPolicy
	if nilA.Log() != nil || nilA.Policy() != nil || !nilA.DeniesAll() {
		t.Error("nil AuditedPolicy accessors")
	}
	if got := auditLogs(Audited(a, log)); len(got) != 2 {
		t.Errorf("auditLogs of two wrappers = %d logs", len(got))
	}
	if got := auditLogs(AllowAll()); len(got) != 0 {
		t.Errorf("auditLogs of AllowAll = %d logs", len(got))
	}
}

// TestNetworkSandboxHooks checks the two hooks the sandbox gives its proxy:
// the policy sees a normalized request with the sandbox, and the audit hook
// writes the final decision, with the sandbox id, to every log.
func TestNetworkSandboxHooks(t *testing.T) {
	var outer, inner bytes.Buffer
	now := func() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 678e6, time.UTC) }
	var seen NetworkRequest
	policy := Custom(func(_ context.Context, r NetworkRequest) (bool, string) {
		seen = r
		return true, "ok"
	})
	sb := &Sandbox{id: "abc123"}
	sb.cfg.Network = Audited(Audited(policy, newAuditLogWriter(&inner, now)), newAuditLogWriter(&outer, now))

	d := decideNetwork(context.Background(), &sb.cfg, sb, "connect", "Example.COM.", 443)
	want := NetworkRequest{Host: "example.com", Port: 443, Protocol: "connect", Sandbox: sb}
	if !d.Allow || seen != want {
		t.Fatalf("decision %+v, policy saw %+v, want %+v", d, seen, want)
	}
	for _, bad := range []struct {
		host string
		port int
	}{{"exa mple.com", 443}, {"example.com", 0}, {"example.com", 70000}} {
		seen = NetworkRequest{}
		if d := decideNetwork(context.Background(), &sb.cfg, sb, "http", bad.host, bad.port); d.Allow || seen != (NetworkRequest{}) {
			t.Errorf("%q:%d: decision %+v, policy saw %+v", bad.host, bad.port, d, seen)
		}
	}

	rec := AuditRecord{Protocol: "connect", Host: "Example.COM.", Port: 443,
		IP: netip.MustParseAddr("192.0.2.7"), Allowed: false, Reason: "local address refused"}
	if err := auditNetwork(sb.cfg.Network, sb.id, rec); err != nil {
		t.Fatal(err)
	}
	wantLine := `{"timestamp":"2025-01-02T03:04:05.678Z","sandbox":"abc123","protocol":"connect","host":"example.com","port":443,"ip":"192.0.2.7","allowed":false,"reason":"local address refused"}` + "\n"
	for name, buf := range map[string]*bytes.Buffer{"outer": &outer, "inner": &inner} {
		if buf.String() != wantLine {
			t.Errorf("%s log:\n got %q\nwant %q", name, buf.String(), wantLine)
		}
	}

	// A failing log refuses: the hook returns its error.
	closed := newAuditLogWriter(&bytes.Buffer{}, now)
	closed.Close()
	sb.cfg.Network = Audited(AllowAll(), closed)
	if err := auditNetwork(sb.cfg.Network, sb.id, rec); err == nil {
		t.Error("audit hook with a closed log returned nil")
	}

	// Without a policy: deny all, nothing to record.
	sb.cfg.Network = nil
	if d := decideNetwork(context.Background(), &sb.cfg, sb, "http", "example.com", 80); d.Allow {
		t.Errorf("nil policy allowed: %+v", d)
	}
	if err := auditNetwork(sb.cfg.Network, sb.id, rec); err != nil {
		t.Errorf("audit without a log: %v", err)
	}
}

func TestNetworkConfig(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		err  string
	}{
		{"zero", Config{}, ""},
		{"valid", Config{AllowLocal: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("::1/128")}}, ""},
		{"zero prefix", Config{AllowLocal: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), {}}}, "allow local #2: invalid prefix"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := checkNetworkConfig(&tc.cfg)
			if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("checkNetworkConfig = %v, want %q", err, tc.err)
			}
		})
	}
	cfg := Config{AllowLocal: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	for _, tc := range []struct {
		ip   string
		want bool
	}{{"127.0.0.1", true}, {"127.9.9.9", true}, {"10.0.0.1", false}, {"::1", false}} {
		if got := allowedLocal(&cfg, netip.MustParseAddr(tc.ip)); got != tc.want {
			t.Errorf("allowedLocal(%s) = %v", tc.ip, got)
		}
	}
	if !NetworkDeniesAll(networkPolicy(&Config{})) {
		t.Error("the zero Config's policy does not deny all")
	}
}
