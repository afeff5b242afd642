package hostpattern

import (
	"net/netip"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		in, want string
		kind     Kind
		port     int
	}{
		{"example.com", "example.com", KindName, 0},
		{"Example.COM.", "example.com", KindName, 0},
		{"localhost", "localhost", KindName, 0},
		{"under_score.example.com", "under_score.example.com", KindName, 0},
		{"1password.com", "1password.com", KindName, 0},
		{"xn--bcher-kva.de", "xn--bcher-kva.de", KindName, 0},
		{"a-b.example", "a-b.example", KindName, 0},
		{"example.com:443", "example.com:443", KindName, 443},
		{"example.com:65535", "example.com:65535", KindName, 65535},
		{"*.Example.com", "*.example.com", KindWildcard, 0},
		{"*.example.com.:8080", "*.example.com:8080", KindWildcard, 8080},
		{"*.io", "*.io", KindWildcard, 0},
		{"192.0.2.1", "192.0.2.1", KindPrefix, 0},
		{"192.0.2.1:80", "192.0.2.1:80", KindPrefix, 80},
		{"2001:DB8:0::1", "2001:db8::1", KindPrefix, 0},
		{"[2001:db8::1]", "2001:db8::1", KindPrefix, 0},
		{"[2001:DB8:0::1]:443", "[2001:db8::1]:443", KindPrefix, 443},
		{"::ffff:192.0.2.1", "::ffff:192.0.2.1", KindPrefix, 0},
		{"10.0.0.0/8", "10.0.0.0/8", KindPrefix, 0},
		{"10.0.0.0/8:5432", "10.0.0.0/8:5432", KindPrefix, 5432},
		{"10.0.0.1/32", "10.0.0.1", KindPrefix, 0},
		{"0.0.0.0/0", "0.0.0.0/0", KindPrefix, 0},
		{"FD00::/8", "fd00::/8", KindPrefix, 0},
		{"[fd00::/8]", "fd00::/8", KindPrefix, 0},
		{"[FD00::/8]:443", "[fd00::/8]:443", KindPrefix, 443},
		{"[::1/128]:22", "[::1]:22", KindPrefix, 22},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			p, err := Parse(tc.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.in, err)
			}
			if p.String() != tc.want || p.Kind() != tc.kind || p.Port() != tc.port {
				t.Fatalf("Parse(%q) = %q kind %d port %d; want %q kind %d port %d",
					tc.in, p, p.Kind(), p.Port(), tc.want, tc.kind, tc.port)
			}
			q, err := Parse(p.String())
			if err != nil || q != p {
				t.Fatalf("Parse(%q) = %+v, which parses to %+v, %v", tc.in, p, q, err)
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"empty", "", "empty pattern"},
		{"star alone", "*", "allow-all"},
		{"star dot", "*.", "empty name"},
		{"star in the middle", "a*b", "may only lead"},
		{"star label in the middle", "a.*.example.com", "may only lead"},
		{"double wildcard", "*.*.example.com", "may only lead"},
		{"star suffix", "example.*", "may only lead"},
		{"star without dot", "*example.com", "may only lead"},
		{"bad port word", "example.com:https", "bad port"},
		{"port zero", "example.com:0", "1 through 65535"},
		{"port too big", "example.com:65536", "1 through 65535"},
		{"port leading zero", "example.com:0443", "bad port"},
		{"port sign", "example.com:+443", "bad port"},
		{"port long", "example.com:000443", "bad port"},
		{"empty port", "example.com:", "bad port"},
		{"empty bracketed port", "[::1]:", "bad port"},
		{"space", "exa mple.com", "invalid character ' '"},
		{"leading space", " example.com", "invalid character"},
		{"tab", "example.com\t", "invalid character"},
		{"del", "example.com\x7f", "invalid character"},
		{"scheme", "http://example.com", "not a URL"},
		{"user", "u@example.com", "not a URL"},
		{"path", "example.com/path", "not a URL"},
		{"double dot", "a..example.com", "empty label"},
		{"two trailing dots", "example.com..", "empty label"},
		{"leading dot", ".example.com", "empty label"},
		{"dot alone", ".", "empty name"},
		{"leading hyphen", "-a.com", "starts or ends with '-'"},
		{"trailing hyphen", "a-.com", "starts or ends with '-'"},
		{"hyphen in wildcard", "*.-x.com", "starts or ends with '-'"},
		{"label too long", strings.Repeat("a", 64) + ".com", "longer than 63"},
		{"name too long", strings.Repeat("a.", 127) + "com", "longer than 253"},
		{"numeric tld", "127.1", "all digits"},
		{"numeric name", "2130706433", "all digits"},
		{"bad ipv4", "256.1.1.1", "neither an IP address nor a host name"},
		{"hex tld", "example.0x1f", "hex number"},
		{"numeric wildcard", "*.10", "all digits"},
		{"non-ascii", "bücher.de", "xn--"},
		{"other punctuation", "exa!mple.com", "invalid character '!'"},
		{"ipv4 in brackets", "[127.0.0.1]:80", "brackets must hold an IPv6"},
		{"name in brackets", "[example.com]:80", "brackets must hold an IPv6"},
		{"unbalanced bracket", "[::1:443", "missing ]"},
		{"stray bracket", "::1]", "brackets"},
		{"inner bracket", "a[b", "brackets"},
		{"junk after bracket", "[::1]443", "[IPv6]:PORT"},
		{"bad port after bracket", "[::1]:x", "bad port"},
		{"ipv6 with port unbracketed", "::1:443:x", "invalid character ':'"},
		{"zone", "fe80::1%eth0", "zone"},
		{"zone in brackets", "[fe80::1%eth0]:443", "zone"},
		{"zone in prefix", "fe80::1%eth0/64", "zone"},
		{"cidr host bits", "10.1.0.0/8", "did you mean 10.0.0.0/8?"},
		{"cidr bad bits", "10.0.0.0/33", "CIDR"},
		{"cidr v4 in brackets", "[10.0.0.0/8]:80", "brackets must hold an IPv6"},
		{"only a port", ":443", "empty host"},
		{"empty brackets", "[]:443", "empty host"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(tc.in)
			if err == nil {
				t.Fatalf("Parse(%q) = %q, nil error", tc.in, p)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse(%q): error %q does not say %q", tc.in, err, tc.want)
			}
			if strings.HasPrefix(err.Error(), "moat") {
				t.Errorf("Parse(%q): error %q carries a prefix", tc.in, err)
			}
			if p != (Pattern{}) {
				t.Errorf("Parse(%q) = %+v with an error", tc.in, p)
			}
		})
	}
}

func TestMatch(t *testing.T) {
	type probe struct {
		host string
		port int
		want bool
	}
	cases := []struct {
		pattern string
		probes  []probe
	}{
		{"example.com", []probe{
			{"example.com", 443, true},
			{"Example.COM.", 80, true},
			{"www.example.com", 443, false},
			{"xexample.com", 443, false},
			{"example.com.evil.net", 443, false},
			{"example.com..", 443, false},
			{"93.184.215.14", 443, false},
		}},
		{"*.example.com", []probe{
			{"a.example.com", 443, true},
			{"a.b.c.example.com", 80, true},
			{"A.Example.Com.", 443, true},
			{"example.com", 443, false},
			{"evilexample.com", 443, false},
			{".example.com", 443, false},
			{"a.example.com.evil.net", 443, false},
			{"-a.example.com", 443, false},
		}},
		{"example.com:443", []probe{
			{"example.com", 443, true},
			{"example.com", 80, false},
			{"example.com", 4430, false},
		}},
		{"example.com", []probe{
			{"example.com", 0, false},
			{"example.com", -1, false},
			{"example.com", 65536, false},
			{"example.com", 65535, true},
		}},
		{"192.0.2.1", []probe{
			{"192.0.2.1", 443, true},
			{"[::ffff:192.0.2.1]", 443, false},
			{"192.0.2.2", 443, false},
		}},
		{"[::1]:443", []probe{
			{"::1", 443, true},
			{"[0:0::1]", 443, true},
			{"::1", 80, false},
			{"localhost", 443, false},
		}},
		{"10.0.0.0/8", []probe{
			{"10.1.2.3", 1, true},
			{"11.0.0.1", 443, false},
			{"10.example.com", 443, false},
			{"::ffff:10.1.2.3", 443, false},
		}},
		{"*.example.com", []probe{
			{"127.1", 443, false},
			{"0x7f.1", 443, false},
			{"a.example.com:443", 443, false},
			{"fe80::1%eth0", 443, false},
		}},
	}
	for _, tc := range cases {
		p, err := Parse(tc.pattern)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.pattern, err)
		}
		for _, pr := range tc.probes {
			if got := p.Match(pr.host, pr.port); got != pr.want {
				t.Errorf("Parse(%q).Match(%q, %d) = %v, want %v", tc.pattern, pr.host, pr.port, got, pr.want)
			}
		}
	}
}

func TestZeroPattern(t *testing.T) {
	var p Pattern
	if p.Kind() != KindNone || p.String() != "" || p.Name() != "" || p.Port() != 0 || p.Prefix().IsValid() {
		t.Fatalf("zero Pattern = %+v", p)
	}
	for _, h := range []string{"example.com", "127.0.0.1", "::1"} {
		if p.Match(h, 443) {
			t.Errorf("zero Pattern matches %q", h)
		}
	}
}

// FuzzParse checks that Parse never panics, that the normalized form
// parses to the same pattern, and that a pattern matches its own literal
// host and nothing that NormalizeHost refuses.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"example.com", "*.example.com", "example.com:443", "*.example.com.:8080",
		"192.0.2.1", "192.0.2.1:80", "[::1]:443", "::1", "10.0.0.0/8", "[fd00::/8]:443",
		"*", "*.", "a*b", "http://x", "[", "]", "[::1", "::ffff:1.2.3.4", "127.1", "",
		"xn--bcher-kva.de", "EXAMPLE.COM.", "a..b", "fe80::1%eth0", "-a.com", "a.0x1",
		"10.0.0.1/32", "u@x", "[]:1", ":1",
	} {
		f.Add(s, "example.com", 443)
	}
	f.Fuzz(func(t *testing.T, s, host string, port int) {
		p, err := Parse(s)
		if err != nil {
			if p != (Pattern{}) {
				t.Fatalf("Parse(%q) = %+v with error %v", s, p, err)
			}
			return
		}
		norm := p.String()
		q, err := Parse(norm)
		if err != nil || q != p || q.String() != norm {
			t.Fatalf("Parse(%q) = %q, which parses to %+v, %v", s, norm, q, err)
		}
		if p.Match(host, port) {
			name, ip, err := NormalizeHost(host)
			if err != nil || port < 1 || port > 65535 {
				t.Fatalf("%q matches refused host %q port %d", s, host, port)
			}
			if ip.IsValid() != (p.Kind() == KindPrefix) {
				t.Fatalf("%q matches %q (%q, %v) across kinds", s, host, name, ip)
			}
		}
		lit, litPort := "", 443
		if p.Port() != 0 {
			litPort = p.Port()
		}
		switch p.Kind() {
		case KindName:
			lit = p.Name()
		case KindWildcard:
			lit = "a." + p.Name()
			if len(lit) > MaxNameLen {
				return
			}
			if p.Match(p.Name(), litPort) {
				t.Fatalf("%q matches its own domain %q", s, p.Name())
			}
		case KindPrefix:
			lit = p.Prefix().Addr().String()
		default:
			t.Fatalf("Parse(%q) = kind %d", s, p.Kind())
		}
		if !p.Match(lit, litPort) {
			t.Fatalf("%q does not match its own host %q port %d", s, lit, litPort)
		}
		if p.Kind() == KindName && !p.Match(strings.ToUpper(lit)+".", litPort) {
			t.Fatalf("%q does not match %q", s, strings.ToUpper(lit)+".")
		}
		if p.Kind() == KindPrefix && p.Match(netip.PrefixFrom(p.Prefix().Addr(), p.Prefix().Bits()).String(), litPort) {
			t.Fatalf("%q matches a prefix written as a host", s)
		}
	})
}
