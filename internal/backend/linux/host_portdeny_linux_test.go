package linux

import (
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/spec"
)

// The port deny is a layer of the report on every host; on the host's
// network it needs Landlock ABI 4, and without it strict enforcement
// lacks it; the helper's spec carries the ports wherever a command is on
// the host's network stack and Landlock can deny connect and bind there.
func TestPortDenyLayer(t *testing.T) {
	ports := []uint16{8080, 9090}
	for _, tc := range []struct {
		name        string
		hostNet     bool
		ns          namespaces
		host        HostInfo
		active      bool
		missing     bool
		specPorts   bool
		detailWants string
	}{
		{"host network, ABI 4", true, namespaces{User: true}, HostInfo{LandlockABI: 4, Seccomp: true}, true, false, true, "connect and bind on every port but ports 8080, 9090"},
		{"host network, ABI 3", true, namespaces{User: true}, HostInfo{LandlockABI: 3, Seccomp: true}, false, true, false, "needs Landlock ABI 4"},
		{"network namespace", false, namespaces{User: true, Net: true}, HostInfo{LandlockABI: 3, Seccomp: true}, true, false, false, "network namespace"},
		{"no namespace, Landlock", false, namespaces{}, HostInfo{LandlockABI: 4, Seccomp: true}, true, false, true, "bind on every port but ports 8080, 9090"},
		{"no namespace, seccomp", false, namespaces{}, HostInfo{LandlockABI: 3, Seccomp: true}, true, false, false, "connect and bind to ports 8080, 9090 too"},
		{"nothing", false, namespaces{}, HostInfo{}, false, true, false, "nothing denies"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &Engine{policy: spec.Policy{WorkDir: "/w", HostNetwork: tc.hostNet, Network: spec.Network{DenyTCPPorts: ports}}, host: tc.host, ns: tc.ns}
			layers, missing := e.portDenyLayer(nil, nil, ports)
			if len(layers) != 1 || layers[0].Name != "tcp-port-deny" || layers[0].Active != tc.active || !strings.Contains(layers[0].Detail, tc.detailWants) {
				t.Fatalf("layers = %+v, want tcp-port-deny active=%v with %q", layers, tc.active, tc.detailWants)
			}
			if (len(missing) > 0) != tc.missing {
				t.Fatalf("missing = %q, want missing=%v", missing, tc.missing)
			}
			if got := len(e.buildBaseSpec().DenyTCPPorts) > 0; got != tc.specPorts {
				t.Fatalf("the helper's spec carries the ports: %v, want %v", got, tc.specPorts)
			}
		})
	}
}

// A helper told to deny ports it cannot fails closed.
func TestBuildPortDenyNeedsABI4(t *testing.T) {
	if rs, err := buildPortDeny(&helperSpec{}); rs != nil || err != nil {
		t.Fatalf("no ports: %v, %v; want nothing", rs, err)
	}
	if _, err := buildPortDeny(&helperSpec{LandlockABI: 3, DenyTCPPorts: []uint16{1}}); err == nil || !strings.Contains(err.Error(), "ABI 4") {
		t.Fatalf("ABI 3: %v, want an error naming ABI 4", err)
	}
}
