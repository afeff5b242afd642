package hfhub

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The token goes to the Endpoint's exact origin only: another host name,
// port or scheme is another server (http.Client alone would send it to any
// port of the host, and to its subdomains), and once a redirect chain has
// left the origin, the token does not come back.
func TestRedirectOriginPolicy(t *testing.T) {
	c := &Client{Endpoint: "http://127.0.0.1:8080/base", Token: "tok"}
	tests := []struct {
		name  string
		chain []string // the requests so far, then the redirect's target
		keep  bool
		err   string
	}{
		{"same origin", []string{"http://127.0.0.1:8080/a", "http://127.0.0.1:8080/b"}, true, ""},
		{"same origin, host case", []string{"http://127.0.0.1:8080/a", "HTTP://127.0.0.1:8080/b"}, true, ""},
		{"other port", []string{"http://127.0.0.1:8080/a", "http://127.0.0.1:8081/b"}, false, ""},
		{"other host name", []string{"http://127.0.0.1:8080/a", "http://localhost:8080/b"}, false, ""},
		{"subdomain", []string{"http://127.0.0.1:8080/a", "http://cdn.127.0.0.1:8080/b"}, false, ""},
		{"other scheme", []string{"http://127.0.0.1:8080/a", "https://127.0.0.1:8080/b"}, false, ""},
		{"back after leaving", []string{"http://127.0.0.1:8080/a", "http://evil:8080/b", "http://127.0.0.1:8080/c"}, false, ""},
		{"https to http", []string{"https://127.0.0.1:8080/a", "http://127.0.0.1:8080/b"}, false, "from https to http"},
		{"file scheme", []string{"http://127.0.0.1:8080/a", "file:///etc/passwd"}, false, "refusing"},
		{"six hops", []string{"http://127.0.0.1:8080/1", "http://127.0.0.1:8080/2", "http://127.0.0.1:8080/3", "http://127.0.0.1:8080/4", "http://127.0.0.1:8080/5", "http://127.0.0.1:8080/6", "http://127.0.0.1:8080/7"}, false, "more than 5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var via []*http.Request
			for _, u := range tc.chain[:len(tc.chain)-1] {
				pu, _ := url.Parse(u)
				via = append(via, &http.Request{URL: pu, Header: http.Header{}})
			}
			to, _ := url.Parse(tc.chain[len(tc.chain)-1])
			req := &http.Request{URL: to, Header: http.Header{"Authorization": {"Bearer tok"}}}
			err := c.checkRedirect(req, via)
			if tc.err != "" {
				if err == nil || !contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := req.Header.Get("Authorization") != ""; got != tc.keep {
				t.Errorf("token kept %v, want %v", got, tc.keep)
			}
		})
	}
	if (&Client{Endpoint: "https://huggingface.co", Token: "t"}).sendsToken(&url.URL{Scheme: "https", Host: "huggingface.co:443"}) != true {
		t.Error("the default port is the same origin")
	}
	if (&Client{Endpoint: "https://huggingface.co"}).sendsToken(&url.URL{Scheme: "https", Host: "huggingface.co"}) {
		t.Error("no token, nothing to send")
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
