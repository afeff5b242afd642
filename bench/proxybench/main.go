// Command proxybench measures moat's policy proxy against direct loopback
// connections, in one run on one machine, and prints the figures side by
// side with their ratios:
//
//   - requests/s with N keep-alive HTTP clients (absolute-form forwarding);
//   - bulk MiB/s on one connection through a CONNECT tunnel;
//   - the p50 and p90 latency of a new connection carrying one request;
//   - the memory an idle Server with a listener costs.
//
// Each figure is measured in rounds that alternate direct and proxied runs
// (the machine's background load then hits both alike); medians are
// compared, and the per-round ratios are printed too.
//
// The origins (an HTTP server and a TCP byte source) and, by default, the
// proxy run in this process. With -proxy the measurements go through an
// external proxy instead, which must allow 127.0.0.1 (its memory is then not
// measured).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/moat-sandbox/moat/internal/proxy"
)

func main() {
	duration := flag.Duration("d", 2*time.Second, "duration of each throughput measurement")
	rounds := flag.Int("rounds", 3, "rounds of alternating direct and proxied measurements; medians are reported")
	clients := flag.Int("clients", 8, "keep-alive HTTP clients")
	samples := flag.Int("n", 2000, "new connections for the latency measurement")
	external := flag.String("proxy", "", "host:port of an external proxy to measure instead of an in-process one")
	audit := flag.Bool("audit", true, "in-process proxy: encode an audit record (JSON, discarded) per decision")
	flag.Parse()
	if err := run(*duration, *rounds, *clients, *samples, *external, *audit); err != nil {
		fmt.Fprintln(os.Stderr, "proxybench:", err)
		os.Exit(1)
	}
}

func run(d time.Duration, rounds, clients, samples int, external string, audit bool) error {
	origin, err := startOrigin()
	if err != nil {
		return err
	}
	bulk, err := startBulkSource()
	if err != nil {
		return err
	}
	proxyAddr, targetHost := external, "127.0.0.1"
	if external == "" {
		targetHost = "origin.bench"
		srv, addr, err := startProxy(audit)
		if err != nil {
			return err
		}
		defer srv.Close()
		proxyAddr = addr
	}
	originPort := origin.Addr().(*net.TCPAddr).Port
	bulkPort := bulk.Addr().(*net.TCPAddr).Port
	direct := fmt.Sprintf("http://127.0.0.1:%d/", originPort)
	viaURL := fmt.Sprintf("http://%s:%d/", targetHost, originPort)

	fmt.Printf("proxybench: GOMAXPROCS=%d, %d rounds, %s per throughput run, %s proxy\n",
		runtime.GOMAXPROCS(0), rounds, d, map[bool]string{true: "in-process", false: "external " + external}[external == ""])

	// Each figure is measured in rounds that alternate direct and proxied
	// runs, so that a change in the machine's background load hits both;
	// the medians are compared.
	var rps, mibps [2][]float64
	var lat [2][][2]time.Duration
	for r := range rounds {
		for i := range 2 {
			mode := (r + i) % 2 // 0 direct, 1 proxy
			var v float64
			if mode == 0 {
				v, err = requestsPerSecond(direct, "", clients, d)
			} else {
				v, err = requestsPerSecond(viaURL, proxyAddr, clients, d)
			}
			if err != nil {
				return fmt.Errorf("requests (%s): %w", modeName[mode], err)
			}
			rps[mode] = append(rps[mode], v)
		}
	}
	for r := range rounds {
		for i := range 2 {
			mode := (r + i) % 2
			var v float64
			if mode == 0 {
				v, err = bulkMiBps(fmt.Sprintf("127.0.0.1:%d", bulkPort), "", d)
			} else {
				v, err = bulkMiBps(fmt.Sprintf("%s:%d", targetHost, bulkPort), proxyAddr, d)
			}
			if err != nil {
				return fmt.Errorf("bulk (%s): %w", modeName[mode], err)
			}
			mibps[mode] = append(mibps[mode], v)
		}
	}
	for r := range rounds {
		for i := range 2 {
			mode := (r + i) % 2
			var v [2]time.Duration
			if mode == 0 {
				v, err = newConnLatency(fmt.Sprintf("127.0.0.1:%d", originPort), "GET / HTTP/1.1\r\nHost: origin\r\nConnection: close\r\n\r\n", samples)
			} else {
				v, err = newConnLatency(proxyAddr, "GET "+viaURL+" HTTP/1.1\r\nHost: origin\r\nConnection: close\r\n\r\n", samples)
			}
			if err != nil {
				return fmt.Errorf("latency (%s): %w", modeName[mode], err)
			}
			lat[mode] = append(lat[mode], v)
		}
	}
	rd, rp := median(rps[0]), median(rps[1])
	fmt.Printf("keep-alive requests/s, %d clients:  direct %8.0f   proxy   %8.0f   ratio %.2f (target >= 0.50)   rounds: %s\n",
		clients, rd, rp, rp/rd, ratios(rps))
	bd, bp := median(mibps[0]), median(mibps[1])
	fmt.Printf("bulk MiB/s, one connection:        direct %8.0f   CONNECT %8.0f   ratio %.2f (target >= 0.60)   rounds: %s\n",
		bd, bp, bp/bd, ratios(mibps))
	p50 := func(mode, q int) float64 {
		var v []float64
		for _, l := range lat[mode] {
			v = append(v, ms(l[q]))
		}
		return median(v)
	}
	fmt.Printf("new connection + 1 request, ms:    direct p50 %.3f p90 %.3f   proxy p50 %.3f p90 %.3f   p50 delta %+.3f ms (target <= +0.5)\n",
		p50(0, 0), p50(0, 1), p50(1, 0), p50(1, 1), p50(1, 0)-p50(0, 0))

	if external == "" {
		heap, rss, err := idleMemory(100)
		if err != nil {
			return fmt.Errorf("memory: %w", err)
		}
		rssText := "n/a"
		if !math.IsNaN(rss) {
			rssText = fmt.Sprintf("%.1f KiB", rss/1024)
		}
		fmt.Printf("idle Server + listener, per server: heap+stacks %.1f KiB, RSS %s (target < 2048 KiB)\n", heap/1024, rssText)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

var modeName = [2]string{"direct", "proxy"}

// median returns the median of v.
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// ratios lists the proxy/direct ratio of each round.
func ratios(v [2][]float64) string {
	var parts []string
	for i := range v[0] {
		parts = append(parts, fmt.Sprintf("%.2f", v[1][i]/v[0][i]))
	}
	return strings.Join(parts, " ")
}

// startOrigin serves a 12-byte answer over HTTP/1.1 on loopback.
func startOrigin() (net.Listener, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	body := []byte("hello world\n")
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	})}
	go srv.Serve(l)
	return l, nil
}

// startBulkSource sends zeros to every connection until it closes.
func startBulkSource() (net.Listener, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go func() {
		buf := make([]byte, 256<<10)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				for {
					if _, err := c.Write(buf); err != nil {
						return
					}
				}
			}()
		}
	}()
	return l, nil
}

// startProxy runs an in-process proxy that allows everything, resolves
// origin.bench to loopback, and allows loopback as a local destination.
func startProxy(audit bool) (*proxy.Server, string, error) {
	cfg := proxy.Config{
		PolicyName: "bench",
		Check: func(_ context.Context, r proxy.Request) proxy.Decision {
			return proxy.Decision{Allow: true, Reason: "bench"}
		},
		Resolver:   fixedResolver{"origin.bench": {netip.MustParseAddr("127.0.0.1")}},
		AllowLocal: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
	}
	if audit {
		var mu sync.Mutex
		enc := json.NewEncoder(io.Discard)
		cfg.Audit = func(r proxy.Record) error {
			mu.Lock()
			defer mu.Unlock()
			return enc.Encode(r)
		}
	}
	srv, err := proxy.New(cfg)
	if err != nil {
		return nil, "", err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	go srv.Serve(l)
	return srv, l.Addr().String(), nil
}

// fixedResolver resolves from a table.
type fixedResolver map[string][]netip.Addr

func (r fixedResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// requestsPerSecond runs clients keep-alive HTTP clients against u (through
// proxyAddr when set) for d, after a short warm-up, and returns the rate.
func requestsPerSecond(u, proxyAddr string, clients int, d time.Duration) (float64, error) {
	var count atomic.Int64
	var firstErr atomic.Value
	var measuring atomic.Bool
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range clients {
		tr := &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}
		if proxyAddr != "" {
			tr.Proxy = http.ProxyURL(&url.URL{Scheme: "http", Host: proxyAddr})
		}
		c := &http.Client{Transport: tr}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer tr.CloseIdleConnections()
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := c.Get(u)
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if err == nil && resp.StatusCode != 200 {
						err = fmt.Errorf("status %s", resp.Status)
					}
				}
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				if measuring.Load() {
					count.Add(1)
				}
			}
		}()
	}
	time.Sleep(d / 5) // warm-up
	measuring.Store(true)
	start := time.Now()
	time.Sleep(d)
	n := count.Load()
	elapsed := time.Since(start)
	close(stop)
	wg.Wait()
	if err, ok := firstErr.Load().(error); ok {
		return 0, err
	}
	return float64(n) / elapsed.Seconds(), nil
}

// bulkMiBps reads from the bulk source at target for d, through a CONNECT
// tunnel when proxyAddr is set, and returns MiB/s.
func bulkMiBps(target, proxyAddr string, d time.Duration) (float64, error) {
	addr := target
	if proxyAddr != "" {
		addr = proxyAddr
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	var r io.Reader = c
	if proxyAddr != "" {
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, &http.Request{Method: "CONNECT"})
		if err != nil {
			return 0, err
		}
		if resp.StatusCode != 200 {
			return 0, fmt.Errorf("CONNECT: %s", resp.Status)
		}
		r = io.MultiReader(io.LimitReader(br, int64(br.Buffered())), c)
	}
	buf := make([]byte, 256<<10)
	readFor := func(d time.Duration) (int64, time.Duration, error) {
		var n int64
		start := time.Now()
		for time.Since(start) < d {
			m, err := r.Read(buf)
			n += int64(m)
			if err != nil {
				return n, time.Since(start), err
			}
		}
		return n, time.Since(start), nil
	}
	if _, _, err := readFor(d / 5); err != nil { // warm-up
		return 0, err
	}
	n, elapsed, err := readFor(d)
	if err != nil {
		return 0, err
	}
	return float64(n) / (1 << 20) / elapsed.Seconds(), nil
}

// newConnLatency opens samples connections to addr one after another, each
// carrying request and read to EOF, and returns the p50 and p90 durations.
func newConnLatency(addr, request string, samples int) ([2]time.Duration, error) {
	times := make([]time.Duration, 0, samples)
	buf := make([]byte, 4096)
	for i := range samples + samples/10 {
		start := time.Now()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return [2]time.Duration{}, err
		}
		if _, err := io.WriteString(c, request); err != nil {
			c.Close()
			return [2]time.Duration{}, err
		}
		var got strings.Builder
		for {
			n, err := c.Read(buf)
			got.Write(buf[:n])
			if err != nil {
				break
			}
		}
		c.Close()
		if !strings.HasPrefix(got.String(), "HTTP/1.1 200 ") {
			return [2]time.Duration{}, fmt.Errorf("answer %q", got.String())
		}
		if i >= samples/10 { // the first tenth warms up
			times = append(times, time.Since(start))
		}
	}
	slices.Sort(times)
	return [2]time.Duration{times[len(times)/2], times[len(times)*9/10]}, nil
}

// idleMemory starts n Servers, each serving a listener with no clients, and
// returns the heap-plus-stack and RSS growth per Server (RSS NaN where
// /proc/self/statm is missing). Either may be slightly negative when the
// runtime returns memory to the OS meanwhile.
func idleMemory(n int) (heap, rss float64, err error) {
	measure := func() (uint64, int64) {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc + m.StackInuse, rssBytes()
	}
	h0, r0 := measure()
	servers := make([]*proxy.Server, 0, n)
	for range n {
		srv, err := proxy.New(proxy.Config{Check: func(context.Context, proxy.Request) proxy.Decision { return proxy.Decision{} }})
		if err != nil {
			return 0, 0, err
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, 0, err
		}
		go srv.Serve(l)
		servers = append(servers, srv)
	}
	time.Sleep(100 * time.Millisecond)
	h1, r1 := measure()
	for _, s := range servers {
		s.Close()
	}
	rss = math.NaN()
	if r0 >= 0 && r1 >= 0 {
		rss = float64(r1-r0) / float64(n)
	}
	return float64(int64(h1)-int64(h0)) / float64(n), rss, nil
}

// rssBytes reads this process's resident set size, or -1.
func rssBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return -1
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return -1
	}
	return pages * int64(os.Getpagesize())
}
