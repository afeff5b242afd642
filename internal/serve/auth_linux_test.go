package serve

import (
	"net/http"
	"testing"

	"github.com/moat-sandbox/moat/internal/session"
	"github.com/moat-sandbox/moat/policy"
)

// A session without the socket guard (host network) can only be made
// with the token, and while it lives every request needs the token; once
// it is closed, the socket serves without it again.
func TestGuardlessSessionNeedsToken(t *testing.T) {
	ts := newTestServer(t, serverOpts{session: session.Options{Policies: []session.Policy{
		testPolicy(t, "default", nil),
		testPolicy(t, "hostnet", func(r *policy.Result) { r.Network.Mode = policy.NetworkHost }),
	}}})
	// Control: a guarded session and requests without the token.
	guarded := ts.create(session.CreateRequest{})
	if r := ts.do("GET", "/v1/sessions", nil); r.status != 200 {
		t.Fatalf("control: no token, guarded only: %d %s", r.status, r.body)
	}
	if r := ts.do("POST", "/v1/sessions", session.CreateRequest{Policy: "hostnet"}); r.status != http.StatusUnauthorized || r.errCode() != "unauthorized" {
		t.Errorf("a host-network session without the token: %d %s", r.status, r.body)
	}
	if n := len(ts.m.List()); n != 1 {
		t.Errorf("the refused session was kept: %d sessions", n)
	}
	open := ts.create(session.CreateRequest{Policy: "hostnet"}, ts.bearer())
	for _, path := range []string{"/v1/sessions", "/v1/sessions/" + guarded, "/v1/sessions/" + open + "/refusals", "/v1/policies"} {
		if r := ts.do("GET", path, nil); r.status != http.StatusUnauthorized || r.errCode() != "unauthorized" {
			t.Errorf("GET %s without the token while a host-network session lives: %d %s", path, r.status, r.body)
		}
		if r := ts.do("GET", path, nil, ts.bearer()); r.status != 200 {
			t.Errorf("control: GET %s with the token: %d %s", path, r.status, r.body)
		}
	}
	if r := ts.do("POST", "/v1/sessions/"+open+"/run", `{"argv":["true"]}`); r.status != http.StatusUnauthorized {
		t.Errorf("run without the token: %d %s", r.status, r.body)
	}
	if r := ts.do("DELETE", "/v1/sessions/"+open, nil, ts.bearer()); r.status != 200 {
		t.Fatalf("close: %d %s", r.status, r.body)
	}
	if r := ts.do("GET", "/v1/sessions", nil); r.status != 200 {
		t.Errorf("after the host-network session closed, no token: %d %s", r.status, r.body)
	}
}

// Loopback TCP always needs the token.
func TestTCPNeedsToken(t *testing.T) {
	ts := newTestServer(t, serverOpts{tcp: true})
	base := "http://" + ts.ls.TCPAddr
	c := &http.Client{}
	if r := doWith(t, c, base, "GET", "/v1/policies", nil); r.status != http.StatusUnauthorized || r.errCode() != "unauthorized" {
		t.Errorf("TCP without the token: %d %s", r.status, r.body)
	}
	wrong := ts.token[:63] + "0"
	if wrong == ts.token {
		wrong = ts.token[:63] + "1"
	}
	if r := doWith(t, c, base, "GET", "/v1/policies", nil, "Authorization: Bearer "+wrong); r.status != http.StatusUnauthorized {
		t.Errorf("TCP with a wrong token: %d %s", r.status, r.body)
	}
	if r := doWith(t, c, base, "GET", "/v1/policies", nil, ts.bearer()); r.status != 200 {
		t.Errorf("control: TCP with the token: %d %s", r.status, r.body)
	}
}
