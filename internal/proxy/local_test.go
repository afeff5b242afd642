package proxy

import (
	"net/netip"
	"strings"
	"testing"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		addr string
		want string // substring of the class; "" = may be dialed
	}{
		// IPv4 refused.
		{"0.0.0.0", "unspecified"},
		{"0.1.2.3", "this network"},
		{"10.0.0.1", "private"},
		{"10.255.255.255", "private"},
		{"100.64.0.1", "CGNAT"},
		{"100.127.255.254", "CGNAT"},
		{"100.100.100.200", "metadata"},
		{"127.0.0.1", "loopback"},
		{"127.255.255.254", "loopback"},
		{"169.254.0.1", "link-local"},
		{"169.254.169.254", "metadata"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"192.0.0.8", "IETF"},
		{"192.0.0.192", "metadata"},
		{"192.168.1.1", "private"},
		{"198.18.0.1", "benchmarking"},
		{"198.19.255.255", "benchmarking"},
		{"224.0.0.1", "multicast"},
		{"239.255.255.250", "multicast"},
		{"240.0.0.1", "reserved"},
		{"255.255.255.255", "broadcast"},

		// IPv4 allowed: just outside the refused ranges, and public.
		{"1.1.1.1", ""},
		{"8.8.8.8", ""},
		{"9.255.255.255", ""},
		{"11.0.0.0", ""},
		{"100.63.255.255", ""},
		{"100.128.0.0", ""},
		{"126.255.255.255", ""},
		{"128.0.0.0", ""},
		{"169.253.255.255", ""},
		{"172.15.255.255", ""},
		{"172.32.0.0", ""},
		{"192.0.2.1", ""},
		{"192.167.255.255", ""},
		{"192.169.0.0", ""},
		{"198.51.100.7", ""},
		{"203.0.113.7", ""},
		{"223.255.255.255", ""},

		// IPv6 refused.
		{"::", "unspecified"},
		{"::1", "loopback"},
		{"fc00::1", "private"},
		{"fd12:3456::1", "private"},
		{"fd00:ec2::254", "metadata"},
		{"fe80::1", "link-local"},
		{"febf::1", "link-local"},
		{"fec0::1", "site-local"},
		{"ff02::1", "multicast"},
		{"ff0e::1", "multicast"},
		{"100::1", "discard"},
		{"64:ff9b:1::a", "local-use NAT64"},

		// IPv4 embedded in IPv6.
		{"::ffff:127.0.0.1", "IPv4-mapped address embedding 127.0.0.1, a loopback"},
		{"::ffff:10.1.2.3", "private"},
		{"::ffff:169.254.169.254", "metadata"},
		{"::ffff:0.0.0.0", "unspecified"},
		{"::ffff:8.8.8.8", ""},
		{"::127.0.0.1", "IPv4-compatible address embedding 127.0.0.1"},
		{"::169.254.169.254", "metadata"},
		{"::8.8.8.8", "IPv4-compatible address (deprecated)"},
		{"64:ff9b::127.0.0.1", "NAT64 address embedding 127.0.0.1"},
		{"64:ff9b::a9fe:a9fe", "metadata"},
		{"64:ff9b::192.168.0.1", "private"},
		{"64:ff9b::8.8.8.8", ""},
		{"2002:7f00:1::", "6to4 address embedding 127.0.0.1"},
		{"2002:a9fe:a9fe::1", "metadata"},
		{"2002:c0a8:101::1", "private"},
		{"2002:808:808::1", ""},
		{"2001:0:7f00:1::1", "Teredo address embedding 127.0.0.1"},
		{"2001:0:808:808::ffff:ffff", "Teredo address embedding 0.0.0.0"},
		{"2001:0:808:808::80ff:fffe", "Teredo address embedding 127.0.0.1"},
		{"2001:0:808:808::f7f7:f7f7", ""},

		// IPv6 allowed.
		{"2001:db8::1", ""},
		{"2606:4700:4700::1111", ""},
		{"2001:4860:4860::8888", ""},
		{"fbff::1", ""},
		{"fe00::1", ""},
		{"64:ff9b:2::1", ""},
	}
	for _, tc := range tests {
		t.Run(tc.addr, func(t *testing.T) {
			got := classify(netip.MustParseAddr(tc.addr))
			if tc.want == "" {
				if got != "" {
					t.Fatalf("classify(%s) = %q, want allowed", tc.addr, got)
				}
				return
			}
			if !strings.Contains(got, tc.want) {
				t.Fatalf("classify(%s) = %q, want it to contain %q", tc.addr, got, tc.want)
			}
		})
	}
}

func TestClassifyIgnoresZone(t *testing.T) {
	if got := classify(netip.MustParseAddr("fe80::1%eth0")); !strings.Contains(got, "link-local") {
		t.Fatalf("classify(fe80::1%%eth0) = %q", got)
	}
	if got := classify(netip.Addr{}); got == "" {
		t.Fatal("classify(invalid) allowed it")
	}
}

func TestRefusedAddr(t *testing.T) {
	s, err := New(Config{
		Check:      allowHosts(),
		AllowLocal: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("fd00::/8")},
		HostAddrs:  func() []netip.Addr { return parseAddrs([]string{"198.51.100.9", "2001:db8::9"}) },
	})
	if err != nil {
		t.Fatal(err)
	}
	host := s.cfg.HostAddrs()
	tests := []struct {
		addr     string
		explicit bool
		want     string
	}{
		{"127.0.0.1", false, ""},             // AllowLocal
		{"::ffff:127.0.0.1", false, ""},      // AllowLocal, mapped form
		{"127.0.0.2", false, "loopback"},     // outside AllowLocal
		{"fd00::5", false, ""},               // AllowLocal IPv6
		{"fc00::5", false, "private"},        // outside it
		{"10.0.0.1", true, ""},               // the policy named it
		{"198.51.100.9", false, "this host"}, // a host address
		{"::ffff:198.51.100.9", false, "this host"},
		{"2001:db8::9", false, "this host"},
		{"198.51.100.10", false, ""},
		{"198.51.100.9", true, ""},
	}
	for _, tc := range tests {
		got := s.refusedAddr(netip.MustParseAddr(tc.addr), tc.explicit, host)
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("refusedAddr(%s, explicit=%v) = %q, want %q", tc.addr, tc.explicit, got, tc.want)
		}
	}
}

func TestInterfaceCache(t *testing.T) {
	c := newInterfaceCache(0)
	addrs := c.addrs()
	if len(addrs) == 0 {
		t.Fatal("no interface addresses; loopback at least should be listed")
	}
	found := false
	for _, a := range addrs {
		found = found || a.IsLoopback()
	}
	if !found {
		t.Errorf("interface addresses %v lack loopback", addrs)
	}
}

// TestDefaultHostAddrsRefused: with the default HostAddrs, every address of
// this machine's interfaces is refused.
func TestDefaultHostAddrsRefused(t *testing.T) {
	s, err := New(Config{Check: allowHosts()})
	if err != nil {
		t.Fatal(err)
	}
	addrs, err := interfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	host := s.cfg.HostAddrs()
	for _, a := range addrs {
		if why := s.refusedAddr(a, false, host); why == "" {
			t.Errorf("interface address %s is not refused", a)
		}
		if why := s.refusedAddr(netip.AddrFrom16(a.As16()), false, host); why == "" {
			t.Errorf("interface address %s in IPv4-mapped form is not refused", a)
		}
	}
}
