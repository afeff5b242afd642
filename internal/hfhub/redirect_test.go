package hfhub_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/hfhub"
	"github.com/moat-sandbox/moat/internal/hfhub/hubtest"
)

// A redirect of the hub to another origin (here a second loopback listener
// on another port, which a browser and this client count as another
// server) never receives the token; a redirect within the hub's origin
// keeps it (the control), and so does every later request to the hub.
func TestFetchRedirectKeepsTheTokenAtTheHub(t *testing.T) {
	const token = "hf_redirect_secret"
	tests := []struct {
		name      string
		file      string
		crossHost bool
	}{
		{"same-origin redirect keeps the token (control)", "config.json", false},
		{"same-origin redirect of an LFS file", "onnx/model.onnx", false},
		{"cross-origin redirect drops the token", "config.json", true},
		{"cross-origin redirect of an LFS file", "onnx/model.onnx", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := hubtest.New(repo, rev, testFiles())
			defer h.Close()
			h.Token = token
			other := hubtest.New(repo, rev, testFiles()) // another origin, serving the same files
			defer other.Close()
			path := "/" + repo + "/resolve/" + rev + "/" + tc.file + "?hop=1"
			to := h.URL + path
			if tc.crossHost {
				to = other.URL + path
			}
			h.RedirectTo(tc.file, to)
			c := newClient(t, h)
			c.Token = token
			if _, err := c.Fetch(context.Background(), repo, rev, tc.file); err != nil {
				t.Fatal(err)
			}
			hops := 0
			for _, r := range h.Requests() {
				if !r.Storage && r.Authorization != "Bearer "+token {
					t.Errorf("hub: %s %s without the token", r.Method, r.Path)
				}
				if !r.Storage && strings.Contains(r.Path, "/resolve/") {
					hops++
				}
			}
			leaked, reached := 0, 0
			for _, r := range other.Requests() {
				reached++
				if r.Authorization != "" {
					leaked++
				}
			}
			for _, r := range h.Requests() {
				if r.Storage && r.Authorization != "" {
					leaked++
				}
			}
			if leaked != 0 {
				t.Errorf("%d requests to another origin carried the token", leaked)
			}
			if tc.crossHost && reached == 0 {
				t.Error("the redirect to the other origin was not followed: the test proves nothing")
			}
			if !tc.crossHost && hops < 2 { // HEAD and HEAD after the hop at least
				t.Errorf("%d resolve requests at the hub, want the redirect followed", hops)
			}
		})
	}
}

// A redirect from https to plain http is refused, and so is a chain longer
// than five hops.
func TestFetchRedirectRefusals(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the plain-http target was reached: %s %s", r.Method, r.URL)
	}))
	defer plain.Close()
	var tlsURL string
	loops := 0
	tlsSrv := httptest.NewTLSServer(withTree("", strings.Repeat("b", 64), 5, 0, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/downgrade.json") {
			http.Redirect(w, r, plain.URL+"/x", http.StatusFound)
			return
		}
		loops++
		http.Redirect(w, r, tlsURL+r.URL.Path+"?n="+strings.Repeat("x", loops), http.StatusFound)
	}))
	defer tlsSrv.Close()
	tlsURL = tlsSrv.URL
	for _, tc := range []struct{ file, want string }{
		{"downgrade.json", "from https to http"},
		{"config.json", "more than 5 times"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			c := &hfhub.Client{Endpoint: tlsSrv.URL, Token: "tok", HTTP: tlsSrv.Client(), Cache: hfhub.Cache{Root: t.TempDir()}}
			_, err := c.Fetch(context.Background(), repo, rev, tc.file)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}
