//go:build linux

package escape_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/session"
	"github.com/moat-sandbox/moat/policy"
)

// sessionSandboxHasNamespaces fails the test unless session id's sandbox
// runs with namespaces (the attacks below need them to mean anything).
func sessionNamespaces(t *testing.T, a *apiServer, id string) bool {
	t.Helper()
	s, err := a.m.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	return s.Sandbox().Report().Active("namespaces")
}

// A sandboxed command cannot drive the server over its Unix socket: it
// does not see the socket, and where a policy grants it the socket, the
// server refuses the connection because the peer is in another user
// namespace. The control is the same probe from the host, which is
// served.
func TestServeSocketFromSandbox(t *testing.T) {
	a := startAPI(t, func(sock string) []session.Policy {
		return []session.Policy{
			servePolicy(t, "default", nil),
			servePolicy(t, "granted", func(r *policy.Result) { r.Sockets = []string{sock} }),
		}
	})
	hidden := a.session(t, "default", false)
	granted := a.session(t, "granted", false)
	if !sessionNamespaces(t, a, hidden) {
		t.Skip("SKIPPING: the host refuses user namespaces; TestServeTokenWhileGuardlessSession attacks that mode")
	}
	host := func(t *testing.T) result { return onHost(t, "/usr/bin/python3", "-c", apiProbe, a.ls.Socket) }
	attack(t, "the socket is out of the sandbox's view", func(t *testing.T, lifted bool) result {
		if lifted {
			return host(t)
		}
		return a.runIn(t, hidden, "python3", "-c", apiProbe, a.ls.Socket)
	}, func(r result) bool { return !apiServed(r) })
	attack(t, "a granted socket refuses a peer in another user namespace", func(t *testing.T, lifted bool) result {
		if lifted {
			return host(t)
		}
		r := a.runIn(t, granted, "python3", "-c", apiProbe, a.ls.Socket)
		if !strings.Contains(r.Stdout, "connected") {
			t.Errorf("the probe could not connect to the granted socket, so the user-namespace check was not reached:\n%v", r)
		}
		return r
	}, func(r result) bool { return !apiServed(r) })
}

// A sandboxed command cannot drive the server over its loopback TCP port:
// with namespaces the port is not on the sandbox's loopback, and under
// host network, where it is, the token is required and the sandbox has
// none, the connect is denied, and so is binding the port on another
// loopback address. The control is the host with the token, or another
// port.
func TestServeTCPFromSandbox(t *testing.T) {
	a := startAPI(t, func(string) []session.Policy {
		return []session.Policy{
			servePolicy(t, "default", nil),
			servePolicy(t, "hostnet", func(r *policy.Result) { r.Network.Mode = policy.NetworkHost }),
		}
	})
	target := "127.0.0.1:" + strconv.Itoa(int(a.ls.TCPPort))
	host := func(t *testing.T) result {
		return onHost(t, "/usr/bin/python3", "-c", apiProbe, target, a.token)
	}
	ns := a.session(t, "default", false)
	if sessionNamespaces(t, a, ns) {
		attack(t, "with namespaces", func(t *testing.T, lifted bool) result {
			if lifted {
				return host(t)
			}
			return a.runIn(t, ns, "python3", "-c", apiProbe, target)
		}, func(r result) bool { return !apiServed(r) })
	} else {
		t.Log("SKIPPING the namespaced probe: the host refuses user namespaces")
	}
	hostnet := a.session(t, "hostnet", true)
	attack(t, "under host network, without the token", func(t *testing.T, lifted bool) result {
		if lifted {
			return host(t)
		}
		return a.runIn(t, hostnet, "python3", "-c", apiProbe, target)
	}, func(r result) bool { return !apiServed(r) })
	// Under host network the port is in reach, and Landlock denies the
	// connect itself (DenyTCPPorts); a port not denied is reached (the
	// control), so the refusal is the rule's.
	other, _ := pongServer(t, "tcp", "127.0.0.1:0")
	attack(t, "under host network, the connect is denied", func(t *testing.T, lifted bool) result {
		port := target
		if lifted {
			port = "127.0.0.1:" + strconv.Itoa(other)
		}
		return a.runIn(t, hostnet, "python3", "-c", apiProbe, port, a.token)
	}, func(r result) bool { return strings.Contains(r.Stdout, "connect refused") })
	// Nor can it take the port beside the server, which holds it on
	// 127.0.0.1 alone: binding it on [::1] or [::] (IPv6-only), where a
	// client asking for localhost would meet the sandbox and hand it the
	// token, or on 127.0.0.2, fails with EACCES (DenyTCPPorts denies bind
	// too); the same binds on another port held on 127.0.0.1 work (the
	// control).
	attack(t, "under host network, the port cannot be bound beside the server", func(t *testing.T, lifted bool) result {
		port := strconv.Itoa(int(a.ls.TCPPort))
		if lifted {
			port = strconv.Itoa(other)
		}
		return a.runIn(t, hostnet, append([]string{"python3", "-c", portBindProbe}, besideLoopback(port)...)...)
	}, func(r result) bool { return strings.Count(r.Stdout, " EACCES") == len(besideLoopback("")) })
}

// Without namespaces a sandboxed process shares the server's user
// namespace, so the socket's peer check cannot tell it from the user: with
// the socket granted, it connects. While such a session (no socket guard)
// lives, every request needs the token, and the sandbox has none: it is
// refused. The control is the same command given the token.
func TestServeTokenWhileGuardlessSession(t *testing.T) {
	withoutNamespaces(t, func(t *testing.T) {
		a := startAPI(t, func(sock string) []session.Policy {
			return []session.Policy{servePolicy(t, "granted", func(r *policy.Result) { r.Sockets = []string{sock} })}
		})
		if st, body := a.call(t, "POST", "/v1/sessions", `{"policy":"granted"}`, false); st != 401 {
			t.Errorf("a session without the socket guard made without the token: %d %s", st, body)
		}
		id := a.session(t, "granted", true)
		if sessionNamespaces(t, a, id) {
			t.Fatal("the session has namespaces under withoutNamespaces")
		}
		attack(t, "a request without the token", func(t *testing.T, lifted bool) result {
			argv := []string{"python3", "-c", apiProbe, a.ls.Socket}
			if lifted {
				argv = append(argv, a.token)
			}
			r := a.runIn(t, id, argv...)
			if !strings.Contains(r.Stdout, "connected") {
				t.Errorf("the probe could not connect to the granted socket:\n%v", r)
			}
			return r
		}, func(r result) bool { return !apiServed(r) })
	})
}

// Without namespaces a sandboxed process (of moat run, at any level)
// shares the server's user namespace and can connect to the socket, so
// the peer check cannot tell it from the user: on a host that refuses
// user namespaces every request on the socket needs the token, even with
// no session live, and the sandbox has none. The control is the host with
// the token.
func TestServeSocketFromSandboxWithoutNamespaces(t *testing.T) {
	withoutNamespaces(t, func(t *testing.T) {
		a := startAPI(t, func(string) []session.Policy { return []session.Policy{servePolicy(t, "default", nil)} })
		for _, level := range []moat.Isolation{moat.IsolationStrict, moat.IsolationDefault, moat.IsolationPermissive} {
			sb := newSandbox(t, moat.Config{Isolation: level})
			attack(t, level.String(), func(t *testing.T, lifted bool) result {
				if lifted {
					return onHost(t, "/usr/bin/python3", "-c", apiProbe, a.ls.Socket, a.token)
				}
				return inSandbox(t, sb, "python3", "-c", apiProbe, a.ls.Socket)
			}, func(r result) bool { return !apiServed(r) })
		}
	})
}
