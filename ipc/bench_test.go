package ipc

import (
	"context"
	"testing"
)

// BenchmarkCall is the transport alone: one typed call on an open
// connection, encode, socket, dispatch, response, decode.
func BenchmarkCall(b *testing.B) {
	path := serve(b, testRouter(b))
	c, err := Dial(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	var n int
	for b.Loop() {
		if err := c.Call(context.Background(), "counter", nil, &n); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDialAndRun is what one shim's client does after its start:
// connect, one command-line call, close.
func BenchmarkDialAndRun(b *testing.B) {
	path := serve(b, testRouter(b))
	for b.Loop() {
		c, err := Dial(context.Background(), path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.Run(context.Background(), "echo-args", Input{Args: []string{"a", "b"}}); err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}
