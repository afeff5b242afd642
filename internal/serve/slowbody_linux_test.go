package serve

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat/internal/session"
)

// slowBody opens a connection to ts that sends a request's headers, with
// a body of 1000 bytes declared, and one byte of it, then nothing more.
func slowBody(t *testing.T, ts *testServer, path string) net.Conn {
	t.Helper()
	c, err := net.Dial("unix", ts.ls.Socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	req := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: moat\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", path, ts.token)
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	return c
}

// 300 connections that send a body slowly hold none of the server's
// turns: while they are in flight, GET /v1/sessions and DELETE of a
// session answer at once. The control shows the flood is real: every
// body slot is held, and a request with a body is answered busy.
func TestSlowBodiesDoNotStarveOthers(t *testing.T) {
	ts := newTestServer(t, serverOpts{serve: Options{QueueWait: 2 * time.Second, BodyTime: 30 * time.Second}})
	id := ts.create(session.CreateRequest{})
	var conns []net.Conn
	for range 300 {
		conns = append(conns, slowBody(t, ts, "/v1/sessions"))
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(ts.srv.bodies) < cap(ts.srv.bodies) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(ts.srv.bodies); n != cap(ts.srv.bodies) {
		t.Fatalf("control: %d of %d body slots held by the slow clients", n, cap(ts.srv.bodies))
	}
	time.Sleep(300 * time.Millisecond) // the rest of the flood arrives, to wait for a body slot
	start := time.Now()
	if r := ts.do("GET", "/v1/sessions", nil); r.status != http.StatusOK || !strings.Contains(string(r.body), id) {
		t.Errorf("GET beside 300 slow bodies: %d %s", r.status, r.body)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("GET beside 300 slow bodies took %v", d)
	}
	start = time.Now()
	if r := ts.do("DELETE", "/v1/sessions/"+id, nil); r.status != http.StatusOK {
		t.Errorf("DELETE beside 300 slow bodies: %d %s", r.status, r.body)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("DELETE beside 300 slow bodies took %v", d)
	}
	// Control: a request with a body waits for a body slot, then is busy.
	if r := ts.do("POST", "/v1/sessions", `{}`); r.status != http.StatusConflict || r.errCode() != "busy" {
		t.Errorf("control: a body beside 300 slow bodies: %d %s", r.status, r.body)
	}
	for _, c := range conns {
		c.Close()
	}
	deadline = time.Now().Add(10 * time.Second)
	for len(ts.srv.bodies) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(ts.srv.bodies); n != 0 {
		t.Errorf("%d body slots still held after the slow clients left", n)
	}
	if r := ts.do("POST", "/v1/sessions", `{}`); r.status != http.StatusCreated {
		t.Errorf("after the slow clients left: %d %s", r.status, r.body)
	}
}

// A body that does not arrive within BodyTime is answered bad_request and
// its slot freed.
func TestSlowBodyCutOff(t *testing.T) {
	ts := newTestServer(t, serverOpts{serve: Options{BodyTime: 300 * time.Millisecond}})
	c := slowBody(t, ts, "/v1/sessions")
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to a slow body: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "did not arrive") {
		t.Errorf("a slow body: %d %s", resp.StatusCode, body)
	}
	if n := len(ts.srv.bodies); n != 0 {
		t.Errorf("%d body slots held after the cut-off", n)
	}
}
