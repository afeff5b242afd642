package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
)

func TestAuditFailureRefuses(t *testing.T) {
	o := startOrigin(t, false)
	log := &auditLog{failing: true}
	dial := newCountingDial()
	_, addr := startProxy(t, Config{
		PolicyName: "allow-list",
		Check:      allowHosts("allowed.test"),
		Audit:      log.write,
		Resolver:   newResolver().set("allowed.test", "127.0.0.1"),
		AllowLocal: loopback,
		Dial:       dial.dial,
	})
	want := `moat: network policy allow-list: "allowed.test" is not allowed: audit log write failed` + "\n"

	status, body, _ := get(t, clientVia(t, "http://"+addr, nil), fmt.Sprintf("http://allowed.test:%d/", o.port))
	if status != 403 || body != want {
		t.Errorf("HTTP: %d %q", status, body)
	}
	_, _, resp := connectRaw(t, addr, fmt.Sprintf("allowed.test:%d", o.port), "")
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 403 || string(b) != want {
		t.Errorf("CONNECT: %d %q", resp.StatusCode, b)
	}
	if _, rep := socksClient(t, addr, "", "", socksConnectTo("allowed.test", o.port)); rep != socksNotAllowed {
		t.Errorf("SOCKS5: reply %#x", rep)
	}
	// A denial whose record cannot be written says so too.
	status, body, _ = get(t, clientVia(t, "http://"+addr, nil), "http://denied.test/")
	if status != 403 || body != `moat: network policy allow-list: "denied.test" is not allowed: audit log write failed`+"\n" {
		t.Errorf("denied HTTP: %d %q", status, body)
	}
	if n := dial.n.Load(); n != 0 {
		t.Errorf("%d dials although no record could be written", n)
	}
}

// TestAuditBeforeDial: the record of an allowed connection is written
// before the proxy dials.
func TestAuditBeforeDial(t *testing.T) {
	o := startOrigin(t, false)
	log := &auditLog{}
	var mu sync.Mutex
	var dialErrs []error
	_, addr := startProxy(t, Config{
		Check:      allowHosts("allowed.test"),
		Audit:      log.write,
		Resolver:   newResolver().set("allowed.test", "127.0.0.1"),
		AllowLocal: loopback,
		Dial: func(ctx context.Context, network, a string) (net.Conn, error) {
			recs := log.records()
			if len(recs) == 0 || !recs[len(recs)-1].Allowed || recs[len(recs)-1].IP+":"+fmt.Sprint(o.port) != a {
				mu.Lock()
				dialErrs = append(dialErrs, fmt.Errorf("dialing %s with records %+v", a, recs))
				mu.Unlock()
			}
			var d net.Dialer
			return d.DialContext(ctx, network, a)
		},
	})
	get(t, clientVia(t, "http://"+addr, nil), fmt.Sprintf("http://allowed.test:%d/", o.port))
	connectRaw(t, addr, fmt.Sprintf("allowed.test:%d", o.port), "")
	socksClient(t, addr, "", "", socksConnectTo("allowed.test", o.port))
	mu.Lock()
	defer mu.Unlock()
	if err := errors.Join(dialErrs...); err != nil {
		t.Fatal(err)
	}
	if n := len(log.records()); n != 3 {
		t.Fatalf("%d records, want 3", n)
	}
}
