package proxy

import (
	"net/http"
	"slices"
	"testing"
)

func TestRemoveHopHeaders(t *testing.T) {
	tests := []struct {
		name string
		in   http.Header
		want []string // header names left, sorted
	}{
		{
			name: "standard hop-by-hop",
			in: http.Header{
				"Connection": {"keep-alive"}, "Keep-Alive": {"timeout=5"}, "Proxy-Authenticate": {"Basic"},
				"Proxy-Authorization": {"Basic eA=="}, "Proxy-Connection": {"keep-alive"}, "Te": {"trailers"},
				"Trailer": {"X"}, "Transfer-Encoding": {"chunked"}, "Upgrade": {"websocket"}, "Accept": {"*/*"},
			},
			want: []string{"Accept"},
		},
		{
			name: "named by Connection",
			in: http.Header{
				"Connection": {"X-Secret, x-other ,", "X-Third"}, "X-Secret": {"1"}, "X-Other": {"2"},
				"X-Third": {"3"}, "X-Kept": {"4"},
			},
			want: []string{"X-Kept"},
		},
		{
			name: "Connection naming an end-to-end header",
			in:   http.Header{"Connection": {"Content-Type"}, "Content-Type": {"text/plain"}, "Content-Length": {"3"}},
			want: []string{"Content-Length"},
		},
		{
			name: "nothing to strip",
			in:   http.Header{"Accept": {"*/*"}, "Host": {"x"}},
			want: []string{"Accept", "Host"},
		},
		{
			name: "empty",
			in:   http.Header{},
			want: nil,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			removeHopHeaders(tc.in)
			var got []string
			for k := range tc.in {
				got = append(got, k)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("left %v, want %v", got, tc.want)
			}
		})
	}
}
