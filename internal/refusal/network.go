package refusal

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"

	"github.com/moat-sandbox/moat/internal/hostpattern"
	"github.com/moat-sandbox/moat/internal/proxy"
)

// MaxNetwork bounds how many names the sandbox looked up, and separately
// how many destinations the proxy refused, its refusals list; a sandbox
// cannot grow them without end.
const MaxNetwork = 64

// Budget admits each key once, up to MaxNetwork keys. The zero value is
// empty and ready.
type Budget struct {
	mu   sync.Mutex
	seen map[string]bool
}

// admit reports whether key is new and fits; overflow is true exactly once,
// for the first key that no longer fits.
func (b *Budget) admit(key string) (ok, overflow bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.seen == nil {
		b.seen = map[string]bool{}
	}
	if b.seen[key] {
		return false, false
	}
	if len(b.seen) >= MaxNetwork {
		if b.seen["\x00full"] {
			return false, false
		}
		b.seen["\x00full"] = true
		return false, true
	}
	b.seen[key] = true
	return true, false
}

// DNSRefuser returns the hook the engine calls with each name the sandbox
// looked up through its resolv.conf, which points at a stub that answers
// "no such name": each name becomes a "dns" refusal in rs, once.
// noNetwork is true when the sandbox's policy denies every destination.
func (rs *List) DNSRefuser(noNetwork bool) func(name string) {
	var b Budget
	return func(name string) {
		if name == "" {
			return
		}
		ok, overflow := b.admit(name)
		switch {
		case ok:
			rs.Add(DNS(noNetwork, name))
		case overflow:
			rs.Add(Refusal{Kind: "dns", Subject: "more names",
				Detail: fmt.Sprintf("only the first %d names looked up are listed", MaxNetwork)})
		}
	}
}

// DNS says why looking up name failed, noNetwork being true when the
// policy denies every destination. With no network the flag that allows
// the name is the fix; under a policy the sandbox must go through the
// proxy, which resolves names itself.
func DNS(noNetwork bool, name string) Refusal {
	r := Refusal{Kind: "dns", Subject: name}
	if noNetwork {
		r.Detail = "the sandbox has no network"
		if allowable(name) {
			r.Setting, r.Value = "network.allow-domain", name
		}
		return Derived(r)
	}
	r.Detail = "looked up directly, but the sandbox reaches the network only through moat's proxy, " +
		"which resolves names itself: use HTTPS_PROXY or ALL_PROXY=socks5h://, which the sandbox is given"
	return r
}

// allowable reports whether name can be put on an allow list as it is.
func allowable(name string) bool {
	_, err := hostpattern.Parse(name)
	return err == nil && !strings.ContainsAny(name, `\*`)
}

// ProxyRefused records a connection the proxy refused, r being its audit
// record, as a "network" refusal naming the flag that would allow it under
// the policy named policy; b bounds how many destinations are listed.
func (rs *List) ProxyRefused(policy string, b *Budget, r proxy.Record) {
	if r.ConnLimit {
		// No destination: the connection was refused on arrival. No flag
		// raises the bound (see GUARANTEES.md).
		rs.Add(Refusal{Kind: "limit", Subject: "proxy connections", Detail: r.Reason})
		return
	}
	dest := net.JoinHostPort(r.Host, strconv.Itoa(r.Port))
	ok, overflow := b.admit(dest)
	if overflow {
		rs.Add(Refusal{Kind: "network", Subject: "more destinations",
			Detail: fmt.Sprintf("only the first %d refused destinations are listed", MaxNetwork)})
	}
	if !ok {
		return
	}
	rs.Add(Network(policy, r, dest))
}

// Network builds the refusal of dest under the policy named policy
// ("allow-list", "allow-all", ...), from the proxy's record r.
func Network(policy string, r proxy.Record, dest string) Refusal {
	ref := Refusal{Kind: "network", Subject: dest, Detail: r.Reason}
	switch {
	case r.IP != "":
		// Refused for the address it is or resolves to: a local one.
		ref.Setting, ref.Value = "network.allow-local", r.IP
	case strings.HasPrefix(r.Reason, "cannot resolve"), r.Reason == "invalid host", r.Reason == "invalid port":
		// No flag makes it work.
	case policy == "allow-list" && allowable(r.Host):
		ref.Setting, ref.Value = "network.allow-domain", r.Host
	}
	return Derived(ref)
}
