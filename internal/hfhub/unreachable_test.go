package hfhub

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"syscall"
	"testing"
)

// A request that got no answer names the place asked and HF_ENDPOINT; an
// interrupt is not blamed on the hub.
func TestTransportError(t *testing.T) {
	c := &Client{Endpoint: "http://127.0.0.1:9"}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	refused := &url.Error{Op: "Head", URL: "http://127.0.0.1:9/x", Err: syscall.ECONNREFUSED}
	storage := &url.Error{Op: "Get", URL: "http://storage.example:8/blob", Err: syscall.ECONNREFUSED}
	tests := []struct {
		name        string
		ctx         context.Context
		err         error
		unreachable bool
		want        []string
	}{
		{"hub refused", context.Background(), refused, true, []string{"cannot reach the hub at http://127.0.0.1:9 (", "set HF_ENDPOINT"}},
		{"storage refused", context.Background(), storage, true, []string{"cannot reach http://storage.example:8 (where the hub at http://127.0.0.1:9 sent", "set HF_ENDPOINT"}},
		{"interrupted", cancelled, refused, false, []string{"connection refused"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := c.transportError(tt.ctx, tt.err)
			if errors.Is(err, ErrUnreachable) != tt.unreachable {
				t.Errorf("%v: unreachable %v, want %v", err, !tt.unreachable, tt.unreachable)
			}
			if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Errorf("%v lost the transport's error", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not say %q", err, w)
				}
			}
		})
	}
}
