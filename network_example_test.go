package moat_test

import (
	"context"
	"fmt"
	"log"
	"net/netip"
	"os"
	"path/filepath"

	"github.com/moat-sandbox/moat"
)

// An allow list names hosts, wildcards for their subdomains, IP addresses
// and CIDR prefixes, each with an optional port.
func ExampleAllowList() {
	policy, err := moat.AllowList("pypi.org:443", "*.pythonhosted.org", "192.0.2.10")
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range []moat.NetworkRequest{
		{Host: "pypi.org", Port: 443},
		{Host: "pypi.org", Port: 80},
		{Host: "files.pythonhosted.org", Port: 443},
		{Host: "pythonhosted.org", Port: 443},
		{Host: "192.0.2.10", Port: 8080},
	} {
		d := policy.Decide(context.Background(), r)
		fmt.Printf("%s:%d allow=%v explicitIP=%v (%s)\n", r.Host, r.Port, d.Allow, d.ExplicitIP, d.Reason)
	}
	// Output:
	// pypi.org:443 allow=true explicitIP=false (matches "pypi.org:443")
	// pypi.org:80 allow=false explicitIP=false (not on the allow list)
	// files.pythonhosted.org:443 allow=true explicitIP=false (matches "*.pythonhosted.org")
	// pythonhosted.org:443 allow=false explicitIP=false (not on the allow list)
	// 192.0.2.10:8080 allow=true explicitIP=true (matches "192.0.2.10")
}

// Audited records every final decision of the sandbox's proxy, one JSON line
// each, before the connection is opened. AllowLocal lets a development
// server on the host through the proxy's refusal of local addresses.
func ExampleAudited() {
	dir, err := os.MkdirTemp("", "audit")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	auditLog, err := moat.OpenAuditLog(filepath.Join(dir, "network.jsonl"))
	if err != nil {
		log.Fatal(err)
	}
	defer auditLog.Close()

	allow, err := moat.AllowList("localhost:3000", "*.github.com")
	if err != nil {
		log.Fatal(err)
	}
	cfg := moat.Config{
		Network:    moat.Audited(allow, auditLog),
		AllowLocal: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
	}
	fmt.Println(moat.NetworkDeniesAll(cfg.Network), moat.NetworkDeniesAll(moat.Config{}.Network))
	// Output: false true
}

// Custom asks a function about each connection.
func ExampleCustom() {
	policy := moat.Custom(func(ctx context.Context, r moat.NetworkRequest) (bool, string) {
		if r.Protocol == "http" {
			return false, "plain HTTP is not allowed"
		}
		return r.Port == 443, ""
	})
	fmt.Println(policy.Decide(context.Background(), moat.NetworkRequest{Host: "example.com", Port: 80, Protocol: "http"}))
	fmt.Println(policy.Decide(context.Background(), moat.NetworkRequest{Host: "example.com", Port: 443, Protocol: "connect"}))
	// Output:
	// {false plain HTTP is not allowed false}
	// {true allowed by custom policy false}
}
