package proxy

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// TestSSRF checks the refusal of local destinations end to end: a policy
// that allows a name does not let it reach the host or its networks, and
// the proxy dials exactly the addresses it checked.
func TestSSRF(t *testing.T) {
	o := startOrigin(t, false)
	allowAll := func(_ context.Context, r Request) Decision { return Decision{Allow: true, Reason: "allow all"} }
	explicitAll := func(_ context.Context, r Request) Decision { return Decision{Allow: true, ExplicitIP: true} }
	tests := []struct {
		name       string
		check      func(context.Context, Request) Decision
		host       string
		addrs      []string
		allowLocal []netip.Prefix
		hostAddrs  []string
		status     int
		reason     string   // substring of the 403 body
		dialed     []string // addresses dialed, port omitted
	}{
		{name: "name to loopback", host: "loop.test", addrs: []string{"127.0.0.1"},
			status: 403, reason: `"loop.test" is not allowed: resolves to 127.0.0.1, a loopback address`},
		{name: "name to loopback, allowed local", host: "loop.test", addrs: []string{"127.0.0.1"}, allowLocal: loopback,
			status: 200, dialed: []string{"127.0.0.1"}},
		{name: "name to ipv4-mapped loopback", host: "mapped.test", addrs: []string{"::ffff:127.0.0.1"},
			status: 403, reason: "resolves to 127.0.0.1, a loopback address"},
		{name: "ipv4-mapped loopback in AllowLocal dials plain ipv4", host: "mapped.test", addrs: []string{"::ffff:127.0.0.1"}, allowLocal: loopback,
			status: 200, dialed: []string{"127.0.0.1"}},
		{name: "name to metadata", host: "meta.test", addrs: []string{"169.254.169.254"},
			status: 403, reason: "resolves to 169.254.169.254, a cloud metadata address"},
		{name: "name to aws ipv6 metadata", host: "meta6.test", addrs: []string{"fd00:ec2::254"},
			status: 403, reason: "a cloud metadata address"},
		{name: "name to nat64 loopback", host: "nat64.test", addrs: []string{"64:ff9b::7f00:1"},
			status: 403, reason: "NAT64 address embedding 127.0.0.1"},
		{name: "name to 6to4 private", host: "6to4.test", addrs: []string{"2002:c0a8:101::1"},
			status: 403, reason: "6to4 address embedding 192.168.1.1"},
		{name: "any refused address refuses the name", host: "mixed.test", addrs: []string{"203.0.113.5", "10.0.0.1"},
			status: 403, reason: "resolves to 10.0.0.1, a private address"},
		{name: "host's own address", host: "self.test", addrs: []string{"203.0.113.20"}, hostAddrs: []string{"203.0.113.20"},
			status: 403, reason: "resolves to 203.0.113.20, an address of this host"},
		{name: "host's own address, mapped", host: "self.test", addrs: []string{"::ffff:203.0.113.20"}, hostAddrs: []string{"203.0.113.20"},
			status: 403, reason: "an address of this host"},
		{name: "public address dialed as checked", host: "public.test", addrs: []string{"203.0.113.10"},
			status: 200, dialed: []string{"203.0.113.10"}},
		{name: "ip literal not named by policy", host: "127.0.0.1", check: allowAll,
			status: 403, reason: `"127.0.0.1" is not allowed: 127.0.0.1 is a loopback address`},
		{name: "ip literal named by policy", host: "127.0.0.1", check: explicitAll,
			status: 200, dialed: []string{"127.0.0.1"}},
		{name: "ExplicitIP is ignored for a name", host: "loop.test", addrs: []string{"127.0.0.1"}, check: explicitAll,
			status: 403, reason: "a loopback address"},
		{name: "ipv6 literal loopback", host: "[::1]", check: allowAll,
			status: 403, reason: `"::1" is not allowed: ::1 is a loopback address`},
		{name: "unspecified literal", host: "0.0.0.0", check: allowAll,
			status: 403, reason: "0.0.0.0 is an unspecified address"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := newResolver()
			if len(tc.addrs) > 0 {
				res.set(tc.host, tc.addrs...)
			}
			dial := newCountingDial()
			for _, a := range []string{"203.0.113.10", "203.0.113.5"} {
				dial.redirect[netip.AddrPortFrom(netip.MustParseAddr(a), uint16(o.port)).String()] = o.Listener.Addr().String()
			}
			check := tc.check
			if check == nil {
				check = allowAll
			}
			log := &auditLog{}
			_, addr := startProxy(t, Config{
				Check:      check,
				Audit:      log.write,
				Resolver:   res,
				AllowLocal: tc.allowLocal,
				Dial:       dial.dial,
				HostAddrs:  func() []netip.Addr { return parseAddrs(tc.hostAddrs) },
			})
			status, body, _ := get(t, clientVia(t, "http://"+addr, nil), fmt.Sprintf("http://%s:%d/", tc.host, o.port))
			if status != tc.status || !strings.Contains(body, tc.reason) {
				t.Fatalf("%d %q, want %d and %q", status, body, tc.status, tc.reason)
			}
			var want []string
			for _, a := range tc.dialed {
				want = append(want, netip.AddrPortFrom(netip.MustParseAddr(a), uint16(o.port)).String())
			}
			if got := dial.dialed(); !slices.Equal(got, want) {
				t.Errorf("dialed %v, want %v", got, want)
			}
			rec := log.last(t)
			if rec.Allowed != (status == 200) {
				t.Errorf("record %+v", rec)
			}
			if status == 403 && !strings.Contains(body, rec.Reason) {
				t.Errorf("record reason %q is not the one given to the client (%q)", rec.Reason, body)
			}
			if n := res.lookups(tc.host); n > 1 {
				t.Errorf("%d lookups, want at most one", n)
			}
		})
	}
}

// TestSSRFRebinding: a resolver that answers a public address first and
// loopback afterwards. The proxy resolves once per new connection and dials
// the address it checked, so the loopback answer never gets dialed: the
// next request that sees it is refused.
func TestSSRFRebinding(t *testing.T) {
	o := startOrigin(t, false)
	res := newResolver().sequence("rebind.test", []string{"203.0.113.7"}, []string{"127.0.0.1"})
	dial := newCountingDial()
	dial.redirect[fmt.Sprintf("203.0.113.7:%d", o.port)] = o.Listener.Addr().String()
	_, addr := startProxy(t, Config{
		Check:    allowHosts("rebind.test"),
		Resolver: res,
		Dial:     dial.dial,
	})
	u := fmt.Sprintf("http://rebind.test:%d/", o.port)
	if status, body, _ := get(t, clientVia(t, "http://"+addr, nil), u); status != 200 {
		t.Fatalf("first request: %d %q", status, body)
	}
	if n := res.lookups("rebind.test"); n != 1 {
		t.Fatalf("%d lookups for one request, want 1", n)
	}
	// A new client (new connection): the name now resolves to loopback.
	status, body, _ := get(t, clientVia(t, "http://"+addr, nil), u)
	if status != 403 || !strings.Contains(body, "resolves to 127.0.0.1, a loopback address") {
		t.Fatalf("after rebinding: %d %q", status, body)
	}
	want := []string{fmt.Sprintf("203.0.113.7:%d", o.port)}
	if got := dial.dialed(); !slices.Equal(got, want) {
		t.Fatalf("dialed %v, want only the checked %v", got, want)
	}
}

// TestSSRFAllProtocols: the same refusal reaches CONNECT and SOCKS5 clients.
func TestSSRFAllProtocols(t *testing.T) {
	log := &auditLog{}
	_, addr := startProxy(t, Config{
		PolicyName: "p",
		Check:      allowHosts("meta.test"),
		Audit:      log.write,
		Resolver:   newResolver().set("meta.test", "169.254.169.254"),
	})
	_, _, resp := connectRaw(t, addr, "meta.test:80", "")
	if resp.StatusCode != 403 {
		t.Errorf("CONNECT: %d", resp.StatusCode)
	}
	if _, rep := socksClient(t, addr, "", "", socksConnectTo("meta.test", 80)); rep != socksNotAllowed {
		t.Errorf("SOCKS5: reply %#x", rep)
	}
	for _, rec := range log.records() {
		if rec.Allowed || rec.IP != "169.254.169.254" || !strings.Contains(rec.Reason, "metadata") {
			t.Errorf("record %+v", rec)
		}
	}
	if n := len(log.records()); n != 2 {
		t.Errorf("%d records, want 2", n)
	}
}
