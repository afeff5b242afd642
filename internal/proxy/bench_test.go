package proxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Benchmarks of the proxy against direct loopback connections; each has a
// "direct" and a "proxy" sub-benchmark so the two read side by side.
// bench/proxy.sh measures the same things as one report with ratios.

func benchProxy(b *testing.B) string {
	b.Helper()
	_, addr := startProxy(b, Config{
		Check:      func(context.Context, Request) Decision { return Decision{Allow: true} },
		Resolver:   newResolver().set("origin.test", "127.0.0.1"),
		AllowLocal: loopback,
		Audit:      func(Record) error { return nil },
	})
	return addr
}

// BenchmarkKeepAliveRequest: one GET over a kept-alive connection.
func BenchmarkKeepAliveRequest(b *testing.B) {
	o := startOrigin(b, false)
	addr := benchProxy(b)
	for _, mode := range []string{"direct", "proxy"} {
		b.Run(mode, func(b *testing.B) {
			tr := &http.Transport{}
			u := fmt.Sprintf("http://127.0.0.1:%d/", o.port)
			if mode == "proxy" {
				tr.Proxy = http.ProxyURL(&url.URL{Scheme: "http", Host: addr})
				u = fmt.Sprintf("http://origin.test:%d/", o.port)
			}
			defer tr.CloseIdleConnections()
			c := &http.Client{Transport: tr}
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					resp, err := c.Get(u)
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			})
		})
	}
}

// BenchmarkNewConnection: a new connection carrying one request.
func BenchmarkNewConnection(b *testing.B) {
	o := startOrigin(b, false)
	addr := benchProxy(b)
	for _, mode := range []string{"direct", "proxy"} {
		b.Run(mode, func(b *testing.B) {
			to, req := o.Listener.Addr().String(), "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
			if mode == "proxy" {
				to, req = addr, fmt.Sprintf("GET http://origin.test:%d/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", o.port)
			}
			for b.Loop() {
				c, err := net.Dial("tcp", to)
				if err != nil {
					b.Fatal(err)
				}
				io.WriteString(c, req)
				got, _ := io.ReadAll(c)
				c.Close()
				if !strings.HasPrefix(string(got), "HTTP/1.1 200") {
					b.Fatalf("%q", got)
				}
			}
		})
	}
}

// BenchmarkCONNECTBulk: bytes from a TCP source through one tunnel.
func BenchmarkCONNECTBulk(b *testing.B) {
	src, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	go func() {
		buf := make([]byte, 256<<10)
		for {
			c, err := src.Accept()
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
	addr := benchProxy(b)
	for _, mode := range []string{"direct", "proxy"} {
		b.Run(mode, func(b *testing.B) {
			var r io.Reader
			if mode == "direct" {
				c, err := net.Dial("tcp", src.Addr().String())
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				r = c
			} else {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: x\r\n\r\n", src.Addr())
				br := bufio.NewReader(c)
				resp, err := http.ReadResponse(br, &http.Request{Method: "CONNECT"})
				if err != nil || resp.StatusCode != 200 {
					b.Fatal(resp, err)
				}
				r = br
			}
			const chunk = 1 << 20
			buf := make([]byte, 256<<10)
			b.SetBytes(chunk)
			for b.Loop() {
				if _, err := io.ReadFull(r, buf[:0]); err != nil {
					b.Fatal(err)
				}
				for n := 0; n < chunk; {
					m, err := r.Read(buf[:min(len(buf), chunk-n)])
					if err != nil {
						b.Fatal(err)
					}
					n += m
				}
			}
		})
	}
}

// BenchmarkSOCKS5Connect: a SOCKS5 handshake and tunnel set-up.
func BenchmarkSOCKS5Connect(b *testing.B) {
	o := startOrigin(b, false)
	addr := benchProxy(b)
	req := socksBytes(5, 1, 0, socksConnectTo("origin.test", o.port))
	reply := make([]byte, 12)
	for b.Loop() {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		c.Write(req)
		if _, err := io.ReadFull(c, reply); err != nil || reply[3] != 0 {
			b.Fatal(reply, err)
		}
		c.Close()
	}
}
