package linux

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/moat-sandbox/moat/internal/spec"
)

// portDenyLayer adds the report's layer for the TCP ports no command may
// connect to (spec.Network.DenyTCPPorts), and what strict enforcement
// lacks for them. With a network namespace the host's ports are out of
// reach; without one and off the host's network only the proxy's port is
// allowed (Landlock) or no IP socket at all (seccomp); on the host's
// network the zygote's Landlock layer allows every port but these, which
// needs Landlock ABI 4.
func (e *Engine) portDenyLayer(layers []spec.Layer, missing []string, ports []uint16) ([]spec.Layer, []string) {
	h := e.host
	l := spec.Layer{Name: "tcp-port-deny"}
	list := portList(ports)
	switch {
	case e.policy.HostNetwork && h.LandlockABI >= 4:
		l.Active, l.Detail = true, fmt.Sprintf("Landlock allows TCP connect to every port but %s, on any address (a layer of its own, built once per sandbox)", list)
	case e.policy.HostNetwork:
		l.Detail = fmt.Sprintf("TCP connect to %s is not denied on the host's network: it needs Landlock ABI 4, the kernel has %d", list, h.LandlockABI)
		missing = append(missing, "tcp-port-deny: "+l.Detail)
	case e.ns.Net:
		l.Active, l.Detail = true, fmt.Sprintf("the network namespace holds none of the host's ports, %s included", list)
	case h.LandlockABI >= 4 && h.Seccomp:
		l.Active, l.Detail = true, fmt.Sprintf("Landlock allows TCP connect to the policy proxy's port only, not to %s", list)
	case h.Seccomp:
		l.Active, l.Detail = true, fmt.Sprintf("seccomp denies every IP socket, so TCP connect to %s too", list)
	default:
		l.Detail = fmt.Sprintf("nothing denies TCP connect to %s: no network namespace, Landlock TCP rules or seccomp", list)
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
