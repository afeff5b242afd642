//go:build linux

package escape_test

// Helpers of the tests whose proxy resolves names with a resolver of the
// test's own (moat.Config.Resolver), so that any name can be made to
// resolve to any address, and change its answer between lookups.

import (
	"context"
	"net"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/moat-sandbox/moat"
)

// fakeResolver is a moat.Resolver: each name has a function of the call
// number (1 for the first lookup of that name) giving its addresses; other
// names are not found. It counts the lookups of every name.
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string]func(call int) []netip.Addr
	calls   map[string]int
}

func newFakeResolver() *fakeResolver {
	return &fakeResolver{answers: map[string]func(int) []netip.Addr{}, calls: map[string]int{}}
}

// set makes name resolve to addrs, always.
func (r *fakeResolver) set(name string, addrs ...string) {
	as := parseAddrs(addrs...)
	r.setFunc(name, func(int) []netip.Addr { return as })
}

// setFunc makes name resolve to what f answers for each call.
func (r *fakeResolver) setFunc(name string, f func(call int) []netip.Addr) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answers[name] = f
}

// LookupNetIP implements moat.Resolver.
func (r *fakeResolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls[host]++
	f, ok := r.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return f(r.calls[host]), nil
}

// lookups is how often name was looked up.
func (r *fakeResolver) lookups(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[name]
}

func parseAddrs(addrs ...string) []netip.Addr {
	out := make([]netip.Addr, len(addrs))
	for i, a := range addrs {
		out[i] = netip.MustParseAddr(a)
	}
	return out
}

// parsePrefixes parses prefixes; none gives nil.
func parsePrefixes(prefixes ...string) []netip.Prefix {
	if len(prefixes) == 0 {
		return nil
	}
	out := make([]netip.Prefix, len(prefixes))
	for i, p := range prefixes {
		out[i] = netip.MustParsePrefix(p)
	}
	return out
}

// newProxiedConfig is newProxied with a whole configuration: cfg.Network
// is audited to a file of its own, closed after the sandbox when the test
// ends.
func newProxiedConfig(t *testing.T, cfg moat.Config) *proxied {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	log, err := moat.OpenAuditLog(path)
	if err != nil {
		t.Fatalf("OpenAuditLog: %v", err)
	}
	t.Cleanup(func() { // registered before the sandbox's, so it runs after
		if err := log.Close(); err != nil {
			t.Errorf("audit log Close: %v", err)
		}
	})
	policy := cfg.Network
	cfg.Network = moat.Audited(policy, log)
	sb := newSandbox(t, cfg)
	if sb.ProxyURL() == "" {
		t.Fatalf("policy %T runs no proxy", policy)
	}
	return &proxied{sb: sb, log: log, audit: path}
}

// viaProxy are the three ways a client asks the proxy, as curl arguments;
// {URL} stands for the target URL.
var viaProxy = []struct{ name, args string }{
	{"http", `-x "$HTTP_PROXY" {URL}`},
	{"connect", `-p -x "$HTTP_PROXY" {URL}`},
	{"socks5", `--proxy "$ALL_PROXY" {URL}`},
}

// curlVia runs curl in sb with args, {URL} replaced by url, and returns
// parseCurl's status ("200", "403", "refused", ...) and body.
func curlVia(t *testing.T, sb *moat.Sandbox, args, url string) (status, body string, r result) {
	t.Helper()
	r = sh(t, sb, "curl -sS --max-time 10 "+curlFmt+" "+strings.ReplaceAll(args, "{URL}", url)+"; echo EXIT=$?")
	status, body = parseCurl(t, r)
	return status, body, r
}
