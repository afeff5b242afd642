package proxy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The test world: names under .test resolve through testResolver to
// loopback test servers (or to public-looking addresses that a Dial hook
// redirects to them), so nothing leaves the machine.

// testResolver answers from a fixed table. A name with several answers in
// seq gets the next one on each lookup (DNS rebinding).
type testResolver struct {
	mu    sync.Mutex
	names map[string][]netip.Addr
	seq   map[string][][]netip.Addr
	calls map[string]int
}

func newResolver() *testResolver {
	return &testResolver{names: map[string][]netip.Addr{}, seq: map[string][][]netip.Addr{}, calls: map[string]int{}}
}

func (r *testResolver) set(name string, addrs ...string) *testResolver {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.names[name] = parseAddrs(addrs)
	return r
}

// sequence makes successive lookups of name return each answer in turn,
// the last one forever.
func (r *testResolver) sequence(name string, answers ...[]string) *testResolver {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range answers {
		r.seq[name] = append(r.seq[name], parseAddrs(a))
	}
	return r
}

func (r *testResolver) lookups(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[name]
}

func (r *testResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.calls[host]
	r.calls[host]++
	if s := r.seq[host]; len(s) > 0 {
		return s[min(n, len(s)-1)], nil
	}
	if a, ok := r.names[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func parseAddrs(s []string) []netip.Addr {
	out := make([]netip.Addr, len(s))
	for i, a := range s {
		out[i] = netip.MustParseAddr(a)
	}
	return out
}

// auditLog collects records; failing makes every write fail.
type auditLog struct {
	mu      sync.Mutex
	recs    []Record
	failing bool
}

func (a *auditLog) write(r Record) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.failing {
		return errors.New("disk full")
	}
	a.recs = append(a.recs, r)
	return nil
}

func (a *auditLog) records() []Record {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Record(nil), a.recs...)
}

// last returns the last record, failing the test when there is none.
func (a *auditLog) last(t *testing.T) Record {
	t.Helper()
	recs := a.records()
	if len(recs) == 0 {
		t.Fatal("no audit record")
	}
	return recs[len(recs)-1]
}

// allowHosts is an allow-list policy over exact host names.
func allowHosts(hosts ...string) func(context.Context, Request) Decision {
	set := map[string]bool{}
	for _, h := range hosts {
		set[h] = true
	}
	return func(_ context.Context, r Request) Decision {
		if set[r.Host] {
			return Decision{Allow: true, Reason: "host in allow-list"}
		}
		return Decision{Reason: "host not in allow-list"}
	}
}

// loopback is the AllowLocal that lets tests reach their 127.0.0.1 servers.
var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}

// noHostAddrs keeps tests independent of this machine's interfaces.
func noHostAddrs() []netip.Addr { return nil }

// startProxy serves a Server for cfg on a loopback port and closes it when
// the test ends. Unset Resolver and HostAddrs get test defaults.
func startProxy(t testing.TB, cfg Config) (*Server, string) {
	t.Helper()
	if cfg.HostAddrs == nil {
		cfg.HostAddrs = noHostAddrs
	}
	if cfg.Resolver == nil {
		cfg.Resolver = newResolver()
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(l) }()
	t.Cleanup(func() {
		s.Close()
		if err := <-done; !errors.Is(err, ErrServerClosed) {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
	})
	return s, l.Addr().String()
}

// origin is a loopback HTTP server that describes each request it gets.
type origin struct {
	*httptest.Server
	port int
}

// startOrigin starts an origin; TLS when tls is set.
func startOrigin(t testing.TB, useTLS bool) *origin {
	t.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Origin-Host", r.Host)
		if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
			w.Header().Set("X-Origin-Addr", a.String())
		}
		w.Header().Set("X-Origin-Path", r.URL.RequestURI())
		var names []string
		for k := range r.Header {
			names = append(names, k)
		}
		w.Header().Set("X-Origin-Headers", strings.Join(names, ","))
		switch r.URL.Path {
		case "/hop":
			// Hop-by-hop headers the proxy must strip on the way back.
			w.Header().Set("Connection", "X-Secret-Hop")
			w.Header().Set("X-Secret-Hop", "1")
			w.Header().Set("Keep-Alive", "timeout=5")
			w.Header().Set("Proxy-Authenticate", "Basic")
			w.Header().Set("Upgrade", "h2c")
		case "/reject":
			// Answer without reading the request body.
			http.Error(w, "too large", http.StatusRequestEntityTooLarge)
			return
		case "/echo":
			io.Copy(w, r.Body)
			return
		case "/stream":
			// No Content-Length: chunked towards the proxy.
			for i := range 3 {
				fmt.Fprintf(w, "part%d;", i)
				w.(http.Flusher).Flush()
			}
			return
		}
		fmt.Fprintf(w, "hello from %s", r.URL.Path)
	})
	var s *httptest.Server
	if useTLS {
		s = httptest.NewTLSServer(h)
	} else {
		s = httptest.NewServer(h)
	}
	t.Cleanup(s.Close)
	port, _ := strconv.Atoi(s.URL[strings.LastIndexByte(s.URL, ':')+1:])
	return &origin{Server: s, port: port}
}

// clientVia is an HTTP client whose every request goes through proxyURL.
// When o is a TLS origin its certificate is trusted.
func clientVia(t testing.TB, proxyURL string, o *origin) *http.Client {
	t.Helper()
	u, err := url.Parse(proxyURL)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{Proxy: http.ProxyURL(u), ForceAttemptHTTP2: false}
	if o != nil && o.TLS != nil {
		tr.TLSClientConfig = &tls.Config{RootCAs: o.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs, ServerName: "example.com"}
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// get fetches u through c and returns the status, body and headers.
func get(t testing.TB, c *http.Client, u string) (int, string, http.Header) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading body: %v", u, err)
	}
	return resp.StatusCode, string(b), resp.Header
}

// rawProxy opens a plain connection to the proxy, with a deadline.
func rawProxy(t testing.TB, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	t.Cleanup(func() { c.Close() })
	return c
}

// countFDs counts this process's open file descriptors, or returns -1
// where /proc/self/fd does not exist. It collects garbage first: the
// runtime caches the pipes that splice(2) relays use in a sync.Pool and
// closes them only when the pool is cleared.
func countFDs() int {
	runtime.GC()
	runtime.GC()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

// settle waits until cond holds, for up to five seconds.
func settle(cond func() bool) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// goroutinesSettle waits for the goroutine count to drop to at most n.
func goroutinesSettle(t testing.TB, n int) {
	t.Helper()
	if !settle(func() bool { return runtime.NumGoroutine() <= n }) {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Errorf("goroutines: %d, want at most %d\n%s", runtime.NumGoroutine(), n, buf)
	}
}

// listFDs describes the open file descriptors, for failure messages.
func listFDs() string {
	ents, _ := os.ReadDir("/proc/self/fd")
	var b strings.Builder
	for _, e := range ents {
		target, _ := os.Readlink("/proc/self/fd/" + e.Name())
		fmt.Fprintf(&b, " %s=%s", e.Name(), target)
	}
	return b.String()
}
