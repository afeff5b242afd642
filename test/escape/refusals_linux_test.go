//go:build linux

package escape_test

// Refusals: what the sandbox was refused is told back, so that an agent can
// fix its next try. Under deny-all a DNS stub inside the sandbox's network
// namespace answers every lookup "no such name" at once and records the
// name; under a policy the proxy's denials are recorded too.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
)

// lookupFast bounds how long a refused lookup may take. It is a sanity
// bound, far above what the stub needs (milliseconds), and far below the
// resolver timeouts (5 s and more) a lookup with no answer would wait.
const lookupFast = 2 * time.Second

// dnsLookups are the ways a sandboxed program looks a name up: glibc's NSS
// through getent, Python's getaddrinfo and curl. Each gets %s, the name, and
// must print LOOKUP-FAILED when the lookup fails.
var dnsLookups = []struct {
	name, script string
	tool         string
}{
	{"getent", "getent hosts %s || echo LOOKUP-FAILED", "getent"},
	{"python-getaddrinfo", `python3 -c 'import socket,sys
try:
    socket.getaddrinfo(sys.argv[1], 443)
    print("RESOLVED")
except socket.gaierror as e:
    print("LOOKUP-FAILED", e)' %s`, "python3"},
	// curl's exit status 6 is "could not resolve host".
	{"curl", "curl -sS --max-time 10 http://%s/ 2>&1; [ $? -eq 6 ] && echo LOOKUP-FAILED", "curl"},
}

// findRefusal returns the refusal of kind about subject, if any.
func findRefusal(rs []moat.Refusal, kind, subject string) (moat.Refusal, bool) {
	for _, r := range rs {
		if r.Kind == kind && r.Subject == subject {
			return r, true
		}
	}
	return moat.Refusal{}, false
}

// TestRefusalDNSDenyAll: under deny-all each lookup fails at once and the
// name shows up in Sandbox.Refusals with the flag that would allow it.
// Controls: the same lookup tools work in the sandbox for a name in
// /etc/hosts, and the stub is really what answers (a query sent by hand to
// 127.0.0.1:53 over TCP gets NXDOMAIN back).
func TestRefusalDNSDenyAll(t *testing.T) {
	sb := newSandbox(t, moat.Config{})
	needNamespaces(t, sb)

	conf := sh(t, sb, "cat /etc/resolv.conf")
	mustContain(t, conf, "nameserver 127.0.0.1")
	mustContain(t, conf, "options use-vc")

	for _, tc := range dnsLookups {
		t.Run(tc.name, func(t *testing.T) {
			need(t, tc.tool)
			name := fmt.Sprintf("moat-%s-%s.invalid", tc.name, randomHex(4))
			start := time.Now()
			r := sh(t, sb, fmt.Sprintf(tc.script, name))
			took := time.Since(start)
			mustContain(t, r, "LOOKUP-FAILED")
			mustNotContain(t, r, "RESOLVED")
			if took > lookupFast {
				t.Errorf("the refused lookup took %v, want under %v: %s", took, lookupFast, r)
			}
			ref, ok := findRefusal(sb.Refusals(), "dns", name)
			if !ok {
				t.Fatalf("Refusals() does not list %q: %v", name, sb.Refusals())
			}
			want := "dns: " + name + ": the sandbox has no network (--network allow-list --allow-domain " + name + ")"
			if ref.String() != want {
				t.Errorf("refusal %q, want %q", ref.String(), want)
			}
			t.Logf("%s failed in %v: %q", tc.name, took.Round(time.Millisecond), strings.TrimSpace(r.Stdout))
		})
	}

	t.Run("control/hosts-file", func(t *testing.T) {
		// The tools resolve in the sandbox what needs no DNS: it is the
		// DNS lookup that fails, not the tool.
		r := sh(t, sb, "getent hosts localhost || echo LOOKUP-FAILED")
		mustNotContain(t, r, "LOOKUP-FAILED")
		mustContain(t, r, "localhost")
	})
	t.Run("control/stub-answers", func(t *testing.T) {
		r := pyIn(t, sb, `
def ask():
    q = struct.pack(">HHHHHH", 0x6d6f, 0x0100, 1, 0, 0, 0)
    for label in b"stub-check.invalid".split(b"."):
        q += bytes([len(label)]) + label
    q += b"\x00" + struct.pack(">HH", 1, 1)
    s = socket.create_connection(("127.0.0.1", 53), timeout=5)
    s.sendall(struct.pack(">H", len(q)) + q)
    n = struct.unpack(">H", s.recv(2))[0]
    a = s.recv(n)
    s.close()
    return "id=%04x rcode=%d" % (struct.unpack(">H", a[:2])[0], a[3] & 15)
probe("stub", ask)
`)
		if v := verdict(t, probes(r), "stub", r); v != "OK id=6d6f rcode=3" {
			t.Fatalf("the stub answered %q, want NXDOMAIN (rcode 3) to our ID: %s", v, r)
		}
		if _, ok := findRefusal(sb.Refusals(), "dns", "stub-check.invalid"); !ok {
			t.Fatalf("Refusals() does not list the hand-made query: %v", sb.Refusals())
		}
	})
}

// TestRefusalDNSUnderPolicy: under a policy the proxy resolves names, so a
// direct lookup is still refused at once (and recorded, saying to use the
// proxy), while the same name reached through the proxy works: the control.
func TestRefusalDNSUnderPolicy(t *testing.T) {
	need(t, "curl")
	target := newHTTPTarget(t, "moat-refusal-pong\n", false)
	p := newProxied(t, moat.AllowAll(), "127.0.0.1/32", "::1/128")
	sb := p.sb
	needNamespaces(t, sb)

	start := time.Now()
	r := sh(t, sb, "getent hosts localhost.moat-direct.invalid || echo LOOKUP-FAILED")
	took := time.Since(start)
	mustContain(t, r, "LOOKUP-FAILED")
	if took > lookupFast {
		t.Errorf("the refused lookup took %v, want under %v", took, lookupFast)
	}
	ref, ok := findRefusal(sb.Refusals(), "dns", "localhost.moat-direct.invalid")
	if !ok {
		t.Fatalf("Refusals() does not list the direct lookup: %v", sb.Refusals())
	}
	if !strings.Contains(ref.Detail, "proxy") || ref.Allow != "" {
		t.Errorf("refusal %q, want it to point at the proxy and name no flag", ref.String())
	}

	// Control: the proxy resolves "localhost" on the host and reaches the
	// loopback server that AllowLocal lets it dial. --noproxy '' keeps
	// curl from going direct for localhost.
	c := sh(t, sb, fmt.Sprintf("curl -sS --max-time 10 --noproxy '' -x \"$HTTP_PROXY\" http://localhost:%d/", target.port))
	mustContain(t, c, "moat-refusal-pong")
	if _, ok := findRefusal(sb.Refusals(), "dns", "localhost"); ok {
		t.Errorf("a name the proxy resolved is listed as a refused lookup: %v", sb.Refusals())
	}
}

// TestRefusalNetworkPolicy: what the proxy refuses shows up as a "network"
// refusal with the policy's reason and the flag that would allow it; what
// it allows does not.
func TestRefusalNetworkPolicy(t *testing.T) {
	need(t, "curl")
	target := newHTTPTarget(t, "moat-refusal-pong\n", false)
	p := newProxied(t, allowList(t, "127.0.0.1"), "127.0.0.1/32")
	curl := func(host string) result {
		return sh(t, p.sb, fmt.Sprintf("curl -sS --max-time 10 --noproxy '' -x \"$HTTP_PROXY\" http://%s:%d/; echo", host, target.port))
	}
	// Allowed: listed by IP, and local addresses allowed.
	mustContain(t, curl("127.0.0.1"), "moat-refusal-pong")
	// Refused by the policy: localhost is a name, and names are not listed.
	r := curl("localhost")
	mustNotContain(t, r, "moat-refusal-pong")

	dest := fmt.Sprintf("localhost:%d", target.port)
	ref, ok := findRefusal(p.sb.Refusals(), "network", dest)
	if !ok {
		t.Fatalf("Refusals() does not list %s: %v", dest, p.sb.Refusals())
	}
	if want := "network: " + dest + ": not on the allow list (--network allow-list --allow-domain localhost)"; ref.String() != want {
		t.Errorf("refusal %q, want %q", ref.String(), want)
	}
	if _, ok := findRefusal(p.sb.Refusals(), "network", fmt.Sprintf("127.0.0.1:%d", target.port)); ok {
		t.Errorf("an allowed destination is listed as refused: %v", p.sb.Refusals())
	}
}

// TestRefusalLocalAddress: a destination refused for being local names
// --allow-local; with that prefix allowed, the same request goes through.
func TestRefusalLocalAddress(t *testing.T) {
	need(t, "curl")
	target := newHTTPTarget(t, "moat-refusal-pong\n", false)
	script := fmt.Sprintf("curl -sS --max-time 10 --noproxy '' -x \"$HTTP_PROXY\" http://127.0.0.1:%d/; echo", target.port)

	refused := newProxied(t, moat.AllowAll())
	mustNotContain(t, sh(t, refused.sb, script), "moat-refusal-pong")
	dest := fmt.Sprintf("127.0.0.1:%d", target.port)
	ref, ok := findRefusal(refused.sb.Refusals(), "network", dest)
	if !ok {
		t.Fatalf("Refusals() does not list %s: %v", dest, refused.sb.Refusals())
	}
	if ref.Allow != "--allow-local 127.0.0.1" {
		t.Errorf("refusal %q, want it to name --allow-local 127.0.0.1", ref.String())
	}

	allowed := newProxied(t, moat.AllowAll(), "127.0.0.1/32")
	mustContain(t, sh(t, allowed.sb, script), "moat-refusal-pong")
	if rs := allowed.sb.Refusals(); len(rs) != 0 {
		t.Errorf("control: refusals %v, want none", rs)
	}
}
