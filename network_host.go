package moat

import "context"

// HostNetwork returns a policy that leaves the sandbox on the host's
// network: no network namespace and no proxy, so every connection the
// host could make is allowed and none is audited. It is what a policy
// document's "network": "host" asks for, and [Sandbox.Report] says so
// plainly. Choose it explicitly; the zero Config denies all network.
func HostNetwork() NetworkPolicy { return hostNetwork{} }

type hostNetwork struct{}

func (hostNetwork) Decide(context.Context, NetworkRequest) NetworkDecision {
	return NetworkDecision{Allow: true, Reason: "host network"}
}

// IsHostNetwork reports whether p is [HostNetwork].
func IsHostNetwork(p NetworkPolicy) bool {
	_, ok := p.(hostNetwork)
	return ok
}
