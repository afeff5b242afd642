package linux

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/moat-sandbox/moat/internal/spec"
)

// portDenyLayer adds the report's layer for the TCP ports no command may
// connect to or bind (spec.Network.DenyTCPPorts), and what strict
// enforcement lacks for them. With a network namespace the host's ports
// are out of reach and a bind lands in the sandbox's own namespace;
// without one the zygote's Landlock layer allows connect and bind on every
// port but these (ABI 4), off the host's network beside the ruleset that
// allows connecting to the proxy's port only, or seccomp denies every IP
// socket; on the host's network without ABI 4 nothing denies them.
func (e *Engine) portDenyLayer(layers []spec.Layer, missing []string, ports []uint16) ([]spec.Layer, []string) {
	h := e.host
	l := spec.Layer{Name: "tcp-port-deny"}
	list := portList(ports)
	switch {
	case e.ns.Net:
		l.Active, l.Detail = true, fmt.Sprintf("the network namespace holds none of the host's ports, %s included, and a bind lands in it", list)
	case e.policy.HostNetwork && h.LandlockABI >= 4:
		l.Active, l.Detail = true, fmt.Sprintf("Landlock allows TCP connect and bind on every port but %s, on any address (a layer of its own, built once per sandbox)", list)
	case e.policy.HostNetwork:
		l.Detail = fmt.Sprintf("TCP connect and bind to %s are not denied on the host's network: it needs Landlock ABI 4, the kernel has %d", list, h.LandlockABI)
		missing = append(missing, "tcp-port-deny: "+l.Detail)
	case h.LandlockABI >= 4 && h.Seccomp:
		l.Active, l.Detail = true, fmt.Sprintf("Landlock allows TCP connect to the policy proxy's port only, not to %s, and TCP bind on every port but %s, on any address (a layer of its own, built once per sandbox)", list, list)
	case h.Seccomp:
		l.Active, l.Detail = true, fmt.Sprintf("seccomp denies every IP socket, so TCP connect and bind to %s too", list)
	default:
		l.Detail = fmt.Sprintf("nothing denies TCP connect or bind to %s: no network namespace, Landlock TCP rules or seccomp", list)
		missing = append(missing, "tcp-port-deny: "+l.Detail)
	}
	return append(layers, l), missing
}

// portList writes ports as "port 8080" or "ports 8080, 9090".
func portList(ports []uint16) string {
	s := make([]string, len(ports))
	for i, p := range ports {
		s[i] = strconv.Itoa(int(p))
	}
	if len(s) == 1 {
		return "port " + s[0]
	}
	return "ports " + strings.Join(s, ", ")
}
