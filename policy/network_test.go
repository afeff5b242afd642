package policy

import (
	"net/netip"
	"strings"
	"testing"
)

func TestParseNetworkMode(t *testing.T) {
	for _, tt := range []struct {
		in      string
		wantErr bool
	}{
		{"deny", false}, {"allow-all", false}, {"allow-list", false},
		{"", true}, {"Deny", true}, {"none", true}, {"Allow", true}, {"allow-some", true},
	} {
		got, err := ParseNetworkMode(tt.in)
		if (err != nil) != tt.wantErr || err == nil && got != tt.in {
			t.Errorf("ParseNetworkMode(%q) = %q, %v", tt.in, got, err)
		}
	}
}

func TestParseDomain(t *testing.T) {
	tests := []struct {
		name, in, want string
		err            string // part of the error, or "" for none
	}{
		{name: "name", in: "example.com", want: "example.com"},
		{name: "case and trailing dot", in: "Example.COM.", want: "example.com"},
		{name: "wildcard", in: "*.crates.io", want: "*.crates.io"},
		{name: "port", in: "example.com:443", want: "example.com:443"},
		{name: "single-address prefix", in: "192.0.2.1/32", want: "192.0.2.1"},
		{name: "wildcard with port", in: "*.Example.com:8080", want: "*.example.com:8080"},
		{name: "single label", in: "localhost", want: "localhost"},
		{name: "underscore", in: "_srv.example.com", want: "_srv.example.com"},
		{name: "digits then a name", in: "1password.com", want: "1password.com"},
		{name: "IPv4", in: "192.0.2.1", want: "192.0.2.1"},
		{name: "IPv4 with port", in: "192.0.2.1:80", want: "192.0.2.1:80"},
		{name: "bare IPv6", in: "2001:DB8::1", want: "2001:db8::1"},
		{name: "bracketed IPv6 loses its brackets", in: "[2001:db8::1]", want: "2001:db8::1"},
		{name: "bracketed IPv6 with port", in: "[::1]:8080", want: "[::1]:8080"},
		{name: "IPv4 prefix", in: "203.0.113.0/24", want: "203.0.113.0/24"},
		{name: "IPv4 prefix with port", in: "203.0.113.0/24:443", want: "203.0.113.0/24:443"},
		{name: "IPv6 prefix", in: "2001:DB8::/32", want: "2001:db8::/32"},
		{name: "IPv6 prefix with port", in: "[2001:db8::/32]:443", want: "[2001:db8::/32]:443"},
		{name: "empty", in: "", err: "empty pattern"},
		{name: "star alone", in: "*", err: "allow-all"},
		{name: "URL", in: "https://example.com", err: "not a URL"},
		{name: "path", in: "example.com/x", err: "not a URL"},
		{name: "user", in: "u@example.com", err: "not a URL"},
		{name: "space", in: "example .com", err: "invalid character ' '"},
		{name: "control", in: "a\x00.com", err: "invalid character"},
		{name: "host bits", in: "10.1.0.0/8", err: "did you mean 10.0.0.0/8?"},
		{name: "bad prefix", in: "10.0.0.0/40", err: "invalid CIDR prefix"},
		{name: "bad prefix address", in: "10.0.0/8", err: "not a URL"},
		{name: "bracketed IPv4 prefix", in: "[10.0.0.0/8]:1", err: "brackets must hold an IPv6"},
		{name: "inner wildcard", in: "a.*.com", err: "may only lead"},
		{name: "suffix wildcard", in: "example.*", err: "may only lead"},
		{name: "bare star prefix", in: "*example.com", err: "may only lead"},
		{name: "shorthand IPv4", in: "127.1", err: "neither an IP address nor a host name"},
		{name: "integer address", in: "2130706433", err: "neither an IP address nor a host name"},
		{name: "non-ASCII", in: "bücher.de", err: "xn--"},
		{name: "empty label", in: "a..com", err: "empty label"},
		{name: "leading dot", in: ".example.com", err: "empty label"},
		{name: "hyphen edge", in: "-a.com", err: "starts or ends"},
		{name: "trailing hyphen", in: "*.a-.com", err: "starts or ends"},
		{name: "hex last label", in: "example.0x1f", err: "neither an IP address nor a host name"},
		{name: "bad character", in: "exa!mple.com", err: `'!'`},
		{name: "long label", in: strings.Repeat("a", 64) + ".com", err: "longer than 63"},
		{name: "long name", in: strings.Repeat("a.", 127) + "com", err: "longer than 253"},
		{name: "port zero", in: "example.com:0", err: "1 through 65535"},
		{name: "port leading zero", in: "example.com:0443", err: "1 through 65535"},
		{name: "port too big", in: "example.com:65536", err: "1 through 65535"},
		{name: "empty port", in: "example.com:", err: "1 through 65535"},
		{name: "empty bracketed port", in: "[::1]:", err: "1 through 65535"},
		{name: "signed port", in: "example.com:+80", err: "1 through 65535"},
		{name: "port only", in: ":80", err: "empty host name"},
		{name: "unclosed bracket", in: "[::1", err: "missing ]"},
		{name: "bracketed IPv4", in: "[192.0.2.1]", err: "brackets must hold an IPv6"},
		{name: "bracketed name", in: "[example.com]", err: "brackets must hold an IPv6"},
		{name: "junk after bracket", in: "[::1]80", err: "[IPv6]:PORT"},
		{name: "zone", in: "fe80::1%eth0", err: "zone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDomain(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ParseDomain(%q) = %q, %v; want an error with %q", tt.in, got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseDomain(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseLocal(t *testing.T) {
	tests := []struct {
		name, in, want string
		wantErr        bool
	}{
		{name: "prefix", in: "10.0.0.0/8", want: "10.0.0.0/8"},
		{name: "host bits cleared", in: "10.1.2.3/8", want: "10.0.0.0/8"},
		{name: "bare IPv4 is /32", in: "192.168.1.5", want: "192.168.1.5/32"},
		{name: "bare IPv6 is /128", in: "::1", want: "::1/128"},
		{name: "IPv6 prefix", in: "FD00::/8", want: "fd00::/8"},
		{name: "mapped address", in: "::ffff:10.0.0.1", want: "10.0.0.1/32"},
		{name: "mapped prefix", in: "::ffff:10.0.0.0/104", want: "10.0.0.0/8"},
		{name: "mapped prefix too short", in: "::ffff:0:0/95", wantErr: true},
		{name: "zone", in: "fe80::1%eth0", wantErr: true},
		{name: "bad bits", in: "10.0.0.0/33", wantErr: true},
		{name: "name", in: "localhost", wantErr: true},
		{name: "empty", in: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseLocal(tt.in)
			if (err != nil) != tt.wantErr || err == nil && got != tt.want {
				t.Fatalf("ParseLocal(%q) = %q, %v; want %q (error %v)", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestParseAuditRotate(t *testing.T) {
	if got, err := ParseAuditRotate("daily"); err != nil || got != RotateDaily {
		t.Errorf("daily: %q, %v", got, err)
	}
	for _, s := range []string{"", "Daily", "weekly"} {
		if _, err := ParseAuditRotate(s); err == nil {
			t.Errorf("ParseAuditRotate(%q) accepted", s)
		}
	}
}

// FuzzParseDomain: what ParseDomain accepts is already normal, so it
// parses to itself.
func FuzzParseDomain(f *testing.F) {
	for _, s := range []string{"example.com", "*.A.b.", "x:80", "[::1]:1", "::1", "1.2.3.4:65535", "*", "a..b", "[", "ä.com"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseDomain(s)
		if err != nil {
			return
		}
		if got == "" {
			t.Fatalf("ParseDomain(%q) = empty", s)
		}
		again, err := ParseDomain(got)
		if err != nil || again != got {
			t.Fatalf("ParseDomain(%q) = %q, which parses to %q, %v", s, got, again, err)
		}
	})
}

// FuzzParseLocal: what ParseLocal accepts is a canonical prefix that
// parses to itself.
func FuzzParseLocal(f *testing.F) {
	for _, s := range []string{"10.0.0.0/8", "10.1.2.3", "::1", "::ffff:1.2.3.4/120", "fe80::1%x", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseLocal(s)
		if err != nil {
			return
		}
		p, err := netip.ParsePrefix(got)
		if err != nil || p != p.Masked() || p.Addr().Is4In6() {
			t.Fatalf("ParseLocal(%q) = %q, not canonical (%v)", s, got, err)
		}
		if again, err := ParseLocal(got); err != nil || again != got {
			t.Fatalf("ParseLocal(%q) = %q, which parses to %q, %v", s, got, again, err)
		}
	})
}
