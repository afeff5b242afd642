package moat

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/hostpattern"
)

func TestAllowListMatch(t *testing.T) {
	type probe struct {
		host string
		port int
		want bool
	}
	cases := []struct {
		name     string
		patterns []string
		probes   []probe
	}{
		{"exact name", []string{"example.com"}, []probe{
			{"example.com", 443, true},
			{"example.com", 80, true},
			{"www.example.com", 443, false},
			{"example.org", 443, false},
			{"xexample.com", 443, false},
		}},
		{"case", []string{"ExAmple.COM"}, []probe{
			{"example.com", 443, true},
			{"EXAMPLE.com", 443, true},
		}},
		{"trailing dot", []string{"example.com."}, []probe{
			{"example.com", 443, true},
			{"example.com.", 443, true},
			{"example.com..", 443, false},
		}},
		{"trailing dot on the request only", []string{"example.com"}, []probe{
			{"Example.Com.", 443, true},
		}},
		{"evil suffix", []string{"example.com"}, []probe{
			{"example.com.evil.net", 443, false},
			{"evil-example.com", 443, false},
			{"example.com-evil.net", 443, false},
		}},
		{"wildcard depth", []string{"*.example.com"}, []probe{
			{"a.example.com", 443, true},
			{"a.b.example.com", 443, true},
			{"a.b.c.d.example.com", 80, true},
			{"A.Example.Com.", 443, true},
		}},
		{"wildcard not apex", []string{"*.example.com"}, []probe{
			{"example.com", 443, false},
			{"evilexample.com", 443, false},
			{"a.example.com.evil.net", 443, false},
			{".example.com", 443, false},
		}},
		{"wildcard and apex", []string{"*.example.com", "example.com"}, []probe{
			{"example.com", 443, true},
			{"x.example.com", 443, true},
		}},
		{"port on entry", []string{"example.com:443"}, []probe{
			{"example.com", 443, true},
			{"example.com", 80, false},
			{"example.com", 4430, false},
		}},
		{"port on wildcard", []string{"*.example.com:8080"}, []probe{
			{"a.example.com", 8080, true},
			{"a.example.com", 80, false},
		}},
		{"invalid request port", []string{"example.com"}, []probe{
			{"example.com", 0, false},
			{"example.com", -1, false},
			{"example.com", 65536, false},
			{"example.com", 65535, true},
		}},
		{"ipv4 literal", []string{"192.0.2.1"}, []probe{
			{"192.0.2.1", 443, true},
			{"192.0.2.2", 443, false},
			{"::ffff:192.0.2.1", 443, false},
			{"[::ffff:192.0.2.1]", 443, false},
		}},
		{"ipv4 literal with port", []string{"192.0.2.1:8080"}, []probe{
			{"192.0.2.1", 8080, true},
			{"192.0.2.1", 80, false},
		}},
		{"ipv6 bracketed with port", []string{"[::1]:443"}, []probe{
			{"::1", 443, true},
			{"[::1]", 443, true},
			{"[0:0::1]", 443, true},
			{"::1", 80, false},
			{"127.0.0.1", 443, false},
		}},
		{"ipv6 bare", []string{"2001:DB8::1"}, []probe{
			{"2001:db8::1", 1, true},
			{"[2001:db8:0::1]", 65535, true},
			{"2001:db8::2", 443, false},
		}},
		{"ipv6 bracketed without port", []string{"[2001:db8::1]"}, []probe{
			{"2001:db8::1", 22, true},
		}},
		{"domain entry never admits an IP", []string{"example.com", "*.example.com", "localhost"}, []probe{
			{"93.184.215.14", 443, false},
			{"127.0.0.1", 443, false},
			{"::1", 443, false},
		}},
		{"IP entry never admits a name", []string{"127.0.0.1", "10.0.0.0/8"}, []probe{
			{"localhost", 443, false},
			{"10.example.com", 443, false},
		}},
		{"shorthand IPv4 is no name", []string{"*.example.com", "127.0.0.1"}, []probe{
			{"127.1", 443, false},
			{"2130706433", 443, false},
			{"0x7f.1", 443, false},
		}},
		{"cidr v4", []string{"10.0.0.0/8"}, []probe{
			{"10.1.2.3", 443, true},
			{"10.255.255.255", 1, true},
			{"11.0.0.1", 443, false},
			{"::ffff:10.1.2.3", 443, false},
		}},
		{"cidr v4 with port", []string{"10.0.0.0/8:5432"}, []probe{
			{"10.1.2.3", 5432, true},
			{"10.1.2.3", 443, false},
		}},
		{"cidr v6", []string{"fd00::/8", "[2001:db8::/32]:443"}, []probe{
			{"fd12::1", 80, true},
			{"2001:db8:1::1", 443, true},
			{"2001:db8:1::1", 80, false},
			{"fe80::1", 80, false},
		}},
		{"invalid request hosts", []string{"example.com", "*.example.com"}, []probe{
			{"", 443, false},
			{"exa mple.com", 443, false},
			{"example.com/x", 443, false},
			{"a..example.com", 443, false},
			{"[example.com]", 443, false},
			{"fe80::1%eth0", 443, false},
			{"-a.example.com", 443, false},
			{"a-.example.com", 443, false},
			{"a.example.0x1f", 443, false},
		}},
		{"empty list", nil, []probe{
			{"example.com", 443, false},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := AllowList(tc.patterns...)
			if err != nil {
				t.Fatal(err)
			}
			for _, pr := range tc.probes {
				d := p.Decide(context.Background(), NetworkRequest{Host: pr.host, Port: pr.port})
				if d.Allow != pr.want {
					t.Errorf("%q port %d: allow = %v (%s), want %v", pr.host, pr.port, d.Allow, d.Reason, pr.want)
				}
				if d.Reason == "" {
					t.Errorf("%q port %d: empty reason", pr.host, pr.port)
				}
			}
		})
	}
}

func TestAllowListExplicitIP(t *testing.T) {
	p, err := AllowList("example.com", "*.example.org", "127.0.0.1:3000", "10.0.0.0/8", "[::1]")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		host     string
		port     int
		allow    bool
		explicit bool
		reason   string
	}{
		{"name", "example.com", 443, true, false, `matches "example.com"`},
		{"wildcard", "a.example.org", 443, true, false, `matches "*.example.org"`},
		{"ip", "127.0.0.1", 3000, true, true, `matches "127.0.0.1:3000"`},
		{"ip wrong port", "127.0.0.1", 3001, false, false, "not on the allow list"},
		{"cidr", "10.9.8.7", 22, true, true, `matches "10.0.0.0/8"`},
		{"ipv6", "[::1]", 22, true, true, `matches "::1"`},
		{"denied", "example.net", 443, false, false, "not on the allow list"},
		{"invalid host", "exa mple", 443, false, false, "invalid host"},
		{"invalid port", "example.com", 0, false, false, "invalid port"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := p.Decide(context.Background(), NetworkRequest{Host: tc.host, Port: tc.port})
			want := NetworkDecision{Allow: tc.allow, ExplicitIP: tc.explicit, Reason: tc.reason}
			if d != want {
				t.Errorf("got %+v, want %+v", d, want)
			}
		})
	}
}

func TestAllowListPatterns(t *testing.T) {
	cases := []struct {
		in, want string
	}{
		{"Example.COM.", "example.com"},
		{"*.Example.com", "*.example.com"},
		{"*.example.com.:8080", "*.example.com:8080"},
		{"example.com:443", "example.com:443"},
		{"192.0.2.1", "192.0.2.1"},
		{"192.0.2.1:80", "192.0.2.1:80"},
		{"[2001:DB8:0::1]:443", "[2001:db8::1]:443"},
		{"[2001:db8::1]", "2001:db8::1"},
		{"2001:db8::1", "2001:db8::1"},
		{"10.0.0.0/8", "10.0.0.0/8"},
		{"10.0.0.0/8:5432", "10.0.0.0/8:5432"},
		{"[FD00::/8]:443", "[fd00::/8]:443"},
		{"fd00::/8", "fd00::/8"},
		{"10.0.0.1/32", "10.0.0.1"},
		{"under_score.example.com", "under_score.example.com"},
		{"xn--bcher-kva.de", "xn--bcher-kva.de"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			p, err := AllowList(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			got := p.Patterns()
			if len(got) != 1 || got[0] != tc.want {
				t.Fatalf("Patterns() = %q, want [%q]", got, tc.want)
			}
			// The normalized form parses to itself.
			q, err := AllowList(got[0])
			if err != nil {
				t.Fatalf("normalized %q: %v", got[0], err)
			}
			if again := q.Patterns()[0]; again != tc.want {
				t.Fatalf("normalized %q normalizes to %q", got[0], again)
			}
		})
	}
}

func TestAllowListRejects(t *testing.T) {
	cases := []struct {
		name, pattern, want string
	}{
		{"empty", "", "empty"},
		{"star alone", "*", `"*"`},
		{"star dot", "*.", "empty"},
		{"star in the middle", "a*b", `"*"`},
		{"star label in the middle", "a.*.example.com", `"*"`},
		{"double wildcard", "*.*.example.com", `"*"`},
		{"star suffix", "example.*", `"*"`},
		{"bad port word", "example.com:https", "bad port"},
		{"port zero", "example.com:0", "bad port"},
		{"port too big", "example.com:65536", "bad port"},
		{"port leading zero", "example.com:0443", "bad port"},
		{"port sign", "example.com:+443", "bad port"},
		{"empty port", "example.com:", "bad port"},
		{"space", "exa mple.com", "invalid character"},
		{"leading space", " example.com", "invalid character"},
		{"tab", "example.com\t", "invalid character"},
		{"scheme", "http://example.com", "not a URL"},
		{"path", "example.com/path", "not a URL"},
		{"double dot", "a..example.com", "empty label"},
		{"two trailing dots", "example.com..", "empty label"},
		{"leading dot", ".example.com", "empty label"},
		{"dot alone", ".", "empty"},
		{"label too long", strings.Repeat("a", 64) + ".com", "63"},
		{"name too long", strings.Repeat("a.", 127) + "com", "253"},
		{"numeric tld", "127.1", "all digits"},
		{"numeric name", "2130706433", "all digits"},
		{"bad ipv4", "256.1.1.1", "all digits"},
		{"non-ascii", "bücher.de", "xn--"},
		{"other punctuation", "exa!mple.com", "invalid character"},
		{"leading hyphen", "-a.example.com", "starts or ends with '-'"},
		{"trailing hyphen", "*.example-.com", "starts or ends with '-'"},
		{"hex tld", "example.0x1f", "hex number"},
		{"user information", "user@example.com", "not a URL"},
		{"ipv4 in brackets", "[127.0.0.1]:80", "IPv6"},
		{"name in brackets", "[example.com]:80", "IPv6"},
		{"unbalanced bracket", "[::1:443", "brackets"},
		{"stray bracket", "::1]", "brackets"},
		{"junk after bracket", "[::1]443", "after"},
		{"bad port after bracket", "[::1]:x", "bad port"},
		{"zone", "fe80::1%eth0", "zone"},
		{"zone in brackets", "[fe80::1%eth0]:443", "zone"},
		{"cidr host bits", "10.1.0.0/8", "host bits"},
		{"cidr bad bits", "10.0.0.0/33", "CIDR"},
		{"cidr v4 in brackets", "[10.0.0.0/8]:80", "IPv6"},
		{"only a port", ":443", "empty host"},
		{"empty brackets", "[]:443", "empty host"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := AllowList("ok.example.com", tc.pattern)
			if err == nil {
				t.Fatalf("AllowList(%q) = nil error", tc.pattern)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "allow list entry "+strconv.Quote(tc.pattern)+": ") {
				t.Errorf("error %q does not name the pattern %q", msg, tc.pattern)
			}
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error %q does not say %q", msg, tc.want)
			}
		})
	}
}

func TestAllowListZeroValue(t *testing.T) {
	var zero AllowListPolicy
	var nilp *AllowListPolicy
	for name, p := range map[string]*AllowListPolicy{"zero": &zero, "nil": nilp} {
		if !p.DeniesAll() || !NetworkDeniesAll(p) {
			t.Errorf("%s: DeniesAll = false", name)
		}
		if d := p.Decide(context.Background(), NetworkRequest{Host: "example.com", Port: 443}); d.Allow {
			t.Errorf("%s: allowed %+v", name, d)
		}
	}
	p, err := AllowList("example.com")
	if err != nil {
		t.Fatal(err)
	}
	if NetworkDeniesAll(p) {
		t.Error("a non-empty allow list denies all")
	}
}

// FuzzAllowList parses a pattern and matches a host against it: neither may
// panic, the normalized pattern must parse to itself, and a pattern that
// parses must match its own literal host.
func FuzzAllowList(f *testing.F) {
	for _, s := range []string{
		"example.com", "*.example.com", "example.com:443", "*.example.com.:8080",
		"192.0.2.1", "192.0.2.1:80", "[::1]:443", "::1", "10.0.0.0/8", "[fd00::/8]:443",
		"*", "*.", "a*b", "http://x", "[", "]", "[::1", "::ffff:1.2.3.4", "127.1", "",
		"xn--bcher-kva.de", "EXAMPLE.COM.", "a..b", "fe80::1%eth0",
	} {
		f.Add(s, "example.com", 443)
	}
	f.Fuzz(func(t *testing.T, pattern, host string, port int) {
		p, err := AllowList(pattern)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "allow list entry ") {
				t.Fatalf("error %q lacks the prefix", err)
			}
			return
		}
		_ = p.Decide(context.Background(), NetworkRequest{Host: host, Port: port})

		norm := p.Patterns()[0]
		q, err := AllowList(norm)
		if err != nil {
			t.Fatalf("normalized pattern %q of %q: %v", norm, pattern, err)
		}
		if again := q.Patterns()[0]; again != norm {
			t.Fatalf("normalized pattern %q of %q normalizes to %q", norm, pattern, again)
		}

		e := p.entries[0]
		lit, litPort := "", 443
		if e.Port() != 0 {
			litPort = e.Port()
		}
		switch e.Kind() {
		case hostpattern.KindName:
			lit = e.Name()
		case hostpattern.KindWildcard:
			lit = "a." + e.Name()
			if len(lit) > 253 {
				return
			}
		case hostpattern.KindPrefix:
			lit = e.Prefix().Addr().String()
		}
		d := p.Decide(context.Background(), NetworkRequest{Host: lit, Port: litPort})
		if !d.Allow {
			t.Fatalf("pattern %q does not match its own host %q port %d: %s", pattern, lit, litPort, d.Reason)
		}
		if d.ExplicitIP != (e.Kind() == hostpattern.KindPrefix) {
			t.Fatalf("pattern %q host %q: ExplicitIP = %v", pattern, lit, d.ExplicitIP)
		}
		// Names also match as written: any case, with a trailing dot.
		if e.Kind() == hostpattern.KindName {
			up := strings.ToUpper(lit) + "."
			if !p.Decide(context.Background(), NetworkRequest{Host: up, Port: litPort}).Allow {
				t.Fatalf("pattern %q does not match %q", pattern, up)
			}
		}
	})
}
