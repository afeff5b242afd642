package proxy

import (
	"net/http"
	"strings"
	"testing"
)

func TestParseRequestTarget(t *testing.T) {
	tests := []struct {
		name      string
		method    string
		target    string
		host      string
		port      int
		authority string
		literal   bool
		err       string // substring of the error; empty for success
	}{
		{"absolute", "GET", "http://example.com/path?q=1", "example.com", 80, "example.com", false, ""},
		{"absolute with port", "GET", "http://example.com:8080/", "example.com", 8080, "example.com:8080", false, ""},
		{"absolute no path", "GET", "http://example.com", "example.com", 80, "example.com", false, ""},
		{"absolute query only", "GET", "http://example.com?x", "example.com", 80, "example.com", false, ""},
		{"upper case scheme and host", "GET", "HTTP://Example.COM/", "example.com", 80, "example.com", false, ""},
		{"trailing dot", "GET", "http://example.com./", "example.com", 80, "example.com", false, ""},
		{"empty port", "GET", "http://example.com:/", "example.com", 80, "example.com", false, ""},
		{"ipv4", "GET", "http://192.0.2.1:81/", "192.0.2.1", 81, "192.0.2.1:81", true, ""},
		{"ipv6", "GET", "http://[2001:DB8::1]:81/", "2001:db8::1", 81, "[2001:db8::1]:81", true, ""},
		{"ipv6 default port", "GET", "http://[::1]/", "::1", 80, "[::1]", true, ""},
		{"ipv4-mapped ipv6", "GET", "http://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1", 80, "[::ffff:127.0.0.1]", true, ""},
		{"underscore", "GET", "http://a_b.example/", "a_b.example", 80, "a_b.example", false, ""},
		{"connect", "CONNECT", "example.com:443", "example.com", 443, "example.com:443", false, ""},
		{"connect default port", "CONNECT", "example.com", "example.com", 443, "example.com", false, ""},
		{"connect ipv6", "CONNECT", "[2001:db8::2]:8443", "2001:db8::2", 8443, "[2001:db8::2]:8443", true, ""},

		{"origin form", "GET", "/path", "", 0, "", false, "not in absolute form"},
		{"asterisk", "OPTIONS", "*", "", 0, "", false, "not in absolute form"},
		{"https", "GET", "https://example.com/", "", 0, "", false, "use CONNECT"},
		{"ftp", "GET", "ftp://example.com/", "", 0, "", false, "not supported"},
		{"missing host", "GET", "http:///path", "", 0, "", false, "missing host"},
		{"missing host with port", "GET", "http://:80/", "", 0, "", false, "missing host"},
		{"userinfo", "GET", "http://user@example.com/", "", 0, "", false, "user information"},
		{"userinfo smuggling", "GET", "http://allowed.test@evil.test/", "", 0, "", false, "user information"},
		{"port zero", "GET", "http://example.com:0/", "", 0, "", false, "1 to 65535"},
		{"port too big", "GET", "http://example.com:65536/", "", 0, "", false, "1 to 65535"},
		{"port sign", "GET", "http://example.com:+80/", "", 0, "", false, "1 to 65535"},
		{"port long", "GET", "http://example.com:000080/", "", 0, "", false, "1 to 65535"},
		{"unbracketed ipv6", "GET", "http://2001:db8::1/", "", 0, "", false, "bracketed"},
		{"bracketed ipv4", "GET", "http://[192.0.2.1]/", "", 0, "", false, "IPv6"},
		{"bracketed name", "GET", "http://[example.com]/", "", 0, "", false, "IPv6"},
		{"missing bracket", "GET", "http://[::1/", "", 0, "", false, "missing ]"},
		{"junk after bracket", "GET", "http://[::1]x/", "", 0, "", false, "after ]"},
		{"zone", "GET", "http://[fe80::1%25eth0]/", "", 0, "", false, "zone"},
		{"percent", "GET", "http://exa%6dple.com/", "", 0, "", false, "invalid character"},
		{"space", "GET", "http://exa mple.com/", "", 0, "", false, "invalid character"},
		{"empty label", "GET", "http://a..b/", "", 0, "", false, "empty label"},
		{"only dot", "GET", "http://./", "", 0, "", false, "empty name"},
		{"short ipv4", "GET", "http://127.1/", "", 0, "", false, "IPv4"},
		{"decimal ipv4", "GET", "http://2130706433/", "", 0, "", false, "IPv4"},
		{"hex ipv4", "GET", "http://0x7f.0x1/", "", 0, "", false, "IPv4"},
		{"octal ipv4", "GET", "http://0177.0.0.1/", "", 0, "", false, "IPv4"},
		{"long label", "GET", "http://" + strings.Repeat("a", 64) + ".example/", "", 0, "", false, "label longer than 63"},
		{"long name", "GET", "http://" + strings.Repeat("a.", 127) + "ab/", "", 0, "", false, "name longer than 253"},
		{"connect empty", "CONNECT", "", "", 0, "", false, "missing authority"},
		{"connect empty host", "CONNECT", ":443", "", 0, "", false, "missing host"},
		{"connect path", "CONNECT", "/x", "", 0, "", false, "invalid character"},
		{"connect bad port", "CONNECT", "example.com:https", "", 0, "", false, "1 to 65535"},
		{"leading hyphen", "GET", "http://-a.example/", "", 0, "", false, "starts or ends with '-'"},
		{"trailing hyphen", "CONNECT", "a-.example:443", "", 0, "", false, "starts or ends with '-'"},
		{"ipv4 trailing dot", "GET", "http://192.0.2.1./", "", 0, "", false, "IPv4"},
		{"empty brackets", "GET", "http://[]/", "", 0, "", false, "IPv6"},
		{"bracket in name", "GET", "http://a]b/", "", 0, "", false, "invalid character"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseRequestTarget(tc.method, tc.target)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("parseRequestTarget(%q, %q) = %+v, %v; want error containing %q", tc.method, tc.target, got, err, tc.err)
				}
				if !strings.HasPrefix(err.Error(), "moat: ") {
					t.Errorf("error %q lacks the moat: prefix", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseRequestTarget(%q, %q): %v", tc.method, tc.target, err)
			}
			if got.host != tc.host || got.port != tc.port || got.authority != tc.authority || got.ip.IsValid() != tc.literal {
				t.Errorf("parseRequestTarget(%q, %q) = host %q port %d authority %q literal %v; want %q %d %q %v",
					tc.method, tc.target, got.host, got.port, got.authority, got.ip.IsValid(), tc.host, tc.port, tc.authority, tc.literal)
			}
		})
	}
}

func TestNormalizeHost(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{"Example.COM", "example.com", ""},
		{"example.com.", "example.com", ""},
		{"xn--bcher-kva.example", "xn--bcher-kva.example", ""},
		{"192.0.2.1", "192.0.2.1", ""},
		{"::FFFF:192.0.2.1", "::ffff:192.0.2.1", ""},
		{"2001:0db8:0000::1", "2001:db8::1", ""},
		{"", "", "empty name"},
		{"..", "", "empty label"},
		{"bücher.example", "", "xn--"},
		{"-a.example", "", "starts or ends with '-'"},
		{"a.example-", "", "starts or ends with '-'"},
		{"192.0.2.1.", "", "IPv4"},
		{"::1]", "", "brackets"},
		{"a/b", "", "invalid character"},
		{"192.0.2.01", "", "IPv4"},
		{"1.2.3", "", "IPv4"},
		{"example.0x1f", "", "IPv4"},
		{"example.0xg", "example.0xg", ""},
		{"fe80::1%eth0", "", "zone"},
		{"[::1]", "", "IPv6"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, _, err := normalizeHost(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("normalizeHost(%q) = %q, %v; want error containing %q", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("normalizeHost(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}

// FuzzParseRequestTarget checks that parsing never panics and that what it
// accepts is self-consistent: a valid port, a normalized host that parses
// again to itself, and an authority that parses back to the same target.
func FuzzParseRequestTarget(f *testing.F) {
	for _, s := range []string{
		"http://example.com/", "http://[::1]:8080/x", "example.com:443", "HTTP://A.B.:80",
		"http://a@b/", "http://[fe80::1%25x]/", "https://x/", "/", "*", "http://127.1/",
		"http://[::ffff:127.0.0.1]/", "[::1]", ":0", "http://x:65535?y",
	} {
		f.Add(http.MethodGet, s)
		f.Add(http.MethodConnect, s)
	}
	f.Fuzz(func(t *testing.T, method, rt string) {
		got, err := parseRequestTarget(method, rt)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "moat: proxy: ") {
				t.Fatalf("error %q lacks the prefix", err)
			}
			return
		}
		if got.port < 1 || got.port > 65535 || got.host == "" {
			t.Fatalf("parseRequestTarget(%q, %q) = %+v", method, rt, got)
		}
		h, ip, err := normalizeHost(got.host)
		if err != nil || h != got.host || ip != got.ip {
			t.Fatalf("host %q does not normalize to itself: %q, %v, %v", got.host, h, ip, err)
		}
		if got.host != strings.ToLower(got.host) || strings.HasSuffix(got.host, ".") {
			t.Fatalf("host %q not normalized", got.host)
		}
		again, err := parseAuthority(got.authority, got.port)
		if err != nil || again.host != got.host || again.port != got.port || again.authority != got.authority {
			t.Fatalf("authority %q of %q parses to %+v, %v", got.authority, rt, again, err)
		}
	})
}
