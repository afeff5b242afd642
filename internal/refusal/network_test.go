package refusal

import (
	"fmt"
	"net"
	"strconv"
	"testing"

	"github.com/moat-sandbox/moat/internal/proxy"
)

func TestDNSRefusal(t *testing.T) {
	tests := []struct {
		name      string
		noNetwork bool
		host      string
		want      string
	}{
		{"deny-all", true, "pypi.org", "dns: pypi.org: the sandbox has no network (--network allow-list --allow-domain pypi.org)"},
		{"deny-all, escaped name", true, `a\027b.example`, `dns: a\027b.example: the sandbox has no network`},
		{"allow-list", false, "pypi.org", "dns: pypi.org: looked up directly, but the sandbox reaches the network only through moat's proxy, which resolves names itself: use HTTPS_PROXY or ALL_PROXY=socks5h://, which the sandbox is given"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DNS(tt.noNetwork, tt.host).String(); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestNetworkRefusal(t *testing.T) {
	tests := []struct {
		name   string
		policy string
		rec    proxy.Record
		want   string
	}{
		{"not listed", "allow-list", proxy.Record{Host: "pypi.org", Port: 443, Reason: "not on the allow list"},
			"network: pypi.org:443: not on the allow list (--network allow-list --allow-domain pypi.org)"},
		{"local address", "allow-all", proxy.Record{Host: "db.internal", Port: 5432, IP: "10.1.2.3", Reason: "resolves to 10.1.2.3, a private address"},
			"network: db.internal:5432: resolves to 10.1.2.3, a private address (--allow-local 10.1.2.3)"},
		{"IPv6 literal", "allow-list", proxy.Record{Host: "2001:db8::1", Port: 80, Reason: "not on the allow list"},
			"network: [2001:db8::1]:80: not on the allow list (--network allow-list --allow-domain 2001:db8::1)"},
		{"no such host", "allow-all", proxy.Record{Host: "nx.example", Port: 443, Reason: "cannot resolve: no such host"},
			"network: nx.example:443: cannot resolve: no such host"},
		{"custom policy", "custom", proxy.Record{Host: "x.example", Port: 443, Reason: "not today"},
			"network: x.example:443: not today"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dest := net.JoinHostPort(tt.rec.Host, strconv.Itoa(tt.rec.Port))
			if got := Network(tt.policy, tt.rec, dest).String(); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestRefusalBudget(t *testing.T) {
	var rs List
	hook := rs.DNSRefuser(true)
	for i := range 3 * MaxNetwork {
		hook(fmt.Sprintf("n%d.example", i%(2*MaxNetwork)))
		hook("n0.example") // a repeat is one refusal
	}
	got := rs.Snapshot()
	if len(got) != MaxNetwork+1 {
		t.Fatalf("%d refusals, want %d names and one that says more were left out", len(got), MaxNetwork)
	}
	if last := got[len(got)-1]; last.Subject != "more names" {
		t.Errorf("last refusal %q, want the one that says more were left out", last)
	}
}
