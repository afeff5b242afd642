package hostpattern

import (
	"net/netip"
	"strings"
	"testing"
)

func TestNormalizeHost(t *testing.T) {
	cases := []struct {
		name, in, want string
		ip             bool
		err            string // part of the error; "" for none
	}{
		{"lower case", "Example.COM", "example.com", false, ""},
		{"trailing dot", "example.com.", "example.com", false, ""},
		{"single label", "localhost", "localhost", false, ""},
		{"underscore and hyphen", "_dmarc.my-host.example", "_dmarc.my-host.example", false, ""},
		{"digits in labels", "1.2.3.example", "1.2.3.example", false, ""},
		{"digits first", "1password.com", "1password.com", false, ""},
		{"xn form", "xn--bcher-kva.example", "xn--bcher-kva.example", false, ""},
		{"hex-like but not hex", "example.0xg", "example.0xg", false, ""},
		{"hex label not last", "0x7f.example", "0x7f.example", false, ""},
		{"longest label", strings.Repeat("a", 63) + ".com", strings.Repeat("a", 63) + ".com", false, ""},
		{"longest name", strings.Repeat("a.", 126) + "a", strings.Repeat("a.", 126) + "a", false, ""},
		{"longest name and a dot", strings.Repeat("a.", 126) + "a.", strings.Repeat("a.", 126) + "a", false, ""},
		{"ipv4", "192.0.2.1", "192.0.2.1", true, ""},
		{"ipv6 bare", "2001:DB8:0::1", "2001:db8::1", true, ""},
		{"ipv6 bracketed", "[::1]", "::1", true, ""},
		{"ipv4-mapped stays mapped", "::FFFF:127.0.0.1", "::ffff:127.0.0.1", true, ""},

		{"empty", "", "", false, "empty name"},
		{"dot", ".", "", false, "empty name"},
		{"two dots", "..", "", false, "empty label"},
		{"two trailing dots", "example.com..", "", false, "empty label"},
		{"leading dot", ".example.com", "", false, "empty label"},
		{"inner empty label", "a..b", "", false, "empty label"},
		{"space", "a b", "", false, "invalid character ' '"},
		{"slash", "a/b", "", false, "invalid character '/'"},
		{"colon", "example.com:443", "", false, "invalid character ':'"},
		{"percent", "a%2e", "", false, "invalid character '%'"},
		{"star", "*.example.com", "", false, "invalid character '*'"},
		{"nul", "a\x00b", "", false, "invalid character"},
		{"non-ascii", "bücher.de", "", false, "xn--"},
		{"leading hyphen", "-a.example.com", "", false, "starts or ends with '-'"},
		{"trailing hyphen", "a.example-.com", "", false, "starts or ends with '-'"},
		{"hyphen label", "a.-.com", "", false, "starts or ends with '-'"},
		{"shorthand ipv4", "127.1", "", false, "all digits"},
		{"decimal ipv4", "2130706433", "", false, "all digits"},
		{"hex then decimal", "0x7f.1", "", false, "all digits"},
		{"octal ipv4", "0177.0.0.1", "", false, "all digits"},
		{"leading zero ipv4", "192.0.2.01", "", false, "IPv4"},
		{"three parts", "1.2.3", "", false, "IPv4"},
		{"ipv4 with trailing dot", "192.0.2.1.", "", false, "IPv4"},
		{"hex last label", "example.0x1f", "", false, "hex number"},
		{"upper hex last label", "example.0X1F", "", false, "hex number"},
		{"bare 0x", "a.0x", "", false, "hex number"},
		{"long label", strings.Repeat("a", 64), "", false, "longer than 63"},
		{"long name", strings.Repeat("a.", 127) + "ab", "", false, "longer than 253"},
		{"ipv4 in brackets", "[127.0.0.1]", "", false, "IPv6"},
		{"name in brackets", "[localhost]", "", false, "IPv6"},
		{"empty brackets", "[]", "", false, "IPv6"},
		{"nested brackets", "[[::1]]", "", false, "IPv6"},
		{"unbalanced open", "[::1", "", false, "brackets"},
		{"unbalanced close", "::1]", "", false, "brackets"},
		{"lone bracket", "[", "", false, "brackets"},
		{"zone", "fe80::1%lo", "", false, "zone"},
		{"zone in brackets", "[fe80::1%lo]", "", false, "zone"},
		{"bad ipv6", "1::2::3", "", false, "invalid character ':'"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ip, err := NormalizeHost(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("NormalizeHost(%q) = %q, %v; want an error saying %q", tc.in, got, err, tc.err)
				}
				if got != "" || ip.IsValid() {
					t.Fatalf("NormalizeHost(%q) = %q, %v with an error", tc.in, got, ip)
				}
				return
			}
			if err != nil || got != tc.want || ip.IsValid() != tc.ip {
				t.Fatalf("NormalizeHost(%q) = %q, %v, %v; want %q, ip %v", tc.in, got, ip, err, tc.want, tc.ip)
			}
			if tc.ip && ip.String() != got {
				t.Fatalf("NormalizeHost(%q) = %q but ip %v", tc.in, got, ip)
			}
		})
	}
}

// TestNormalizeHostErrorsArePlain: callers add the subject and the
// "moat:" prefix, so the package's errors carry neither.
func TestNormalizeHostErrorsArePlain(t *testing.T) {
	for _, h := range []string{"", "a..b", "[::1", "127.1", "a b"} {
		_, _, err := NormalizeHost(h)
		if err == nil || strings.HasPrefix(err.Error(), "moat") {
			t.Errorf("NormalizeHost(%q): error %v", h, err)
		}
	}
}

// FuzzNormalizeHost checks that normalization never panics, is idempotent,
// and yields only names and addresses that are safe to log and to dial.
func FuzzNormalizeHost(f *testing.F) {
	for _, s := range []string{
		"example.com", "EXAMPLE.com.", "[::1]", "::1", "1.2.3.4", "127.1", "", "[", "a..b",
		"fe80::1%x", "-a.b", "a.0x1f", "1.2.3.4.", "::ffff:1.2.3.4", "xn--bcher-kva.de",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		name, ip, err := NormalizeHost(host)
		if err != nil {
			if name != "" || ip.IsValid() {
				t.Fatalf("NormalizeHost(%q) = %q, %v with error %v", host, name, ip, err)
			}
			return
		}
		again, ip2, err := NormalizeHost(name)
		if err != nil || again != name || ip2 != ip {
			t.Fatalf("NormalizeHost(%q) = %q, then %q, %v", host, name, again, err)
		}
		if ip.IsValid() {
			if ip.String() != name || ip.Zone() != "" {
				t.Fatalf("NormalizeHost(%q) = %q, ip %v", host, name, ip)
			}
			return
		}
		if _, err := netip.ParseAddr(name); err == nil {
			t.Fatalf("NormalizeHost(%q) = name %q that is an address", host, name)
		}
		if name == "" || len(name) > MaxNameLen {
			t.Fatalf("NormalizeHost(%q) = name of %d bytes", host, len(name))
		}
		for _, c := range []byte(name) {
			if !(c == '.' || c == '-' || c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z') {
				t.Fatalf("NormalizeHost(%q) = %q with %q", host, name, c)
			}
		}
		labels := strings.Split(name, ".")
		for _, l := range labels {
			if l == "" || len(l) > MaxLabelLen || l[0] == '-' || l[len(l)-1] == '-' {
				t.Fatalf("NormalizeHost(%q) = %q with label %q", host, name, l)
			}
		}
		if last := labels[len(labels)-1]; allDigits(last) || hexNumber(last) {
			t.Fatalf("NormalizeHost(%q) = %q, whose last label is a number", host, name)
		}
	})
}
