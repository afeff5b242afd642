package proxy

import (
	"encoding/base64"
	"net/http"
	"net/netip"
	"strings"
	"testing"
)

func basic(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

func TestAuthorized(t *testing.T) {
	tests := []struct {
		name       string
		credential string
		values     []string
		want       bool
	}{
		{"no credential configured", "", nil, true},
		{"no credential, header ignored", "", []string{"garbage"}, true},
		{"missing", "pw", nil, false},
		{"right", "pw", []string{basic("moat", "pw")}, true},
		{"password with colon", "p:w", []string{basic("moat", "p:w")}, true},
		{"lower-case scheme", "pw", []string{"basic " + base64.StdEncoding.EncodeToString([]byte("moat:pw"))}, true},
		{"second value right", "pw", []string{"Bearer x", basic("moat", "pw")}, true},
		{"wrong password", "pw", []string{basic("moat", "pW")}, false},
		{"password prefix", "pw", []string{basic("moat", "p")}, false},
		{"wrong user", "pw", []string{basic("root", "pw")}, false},
		{"no colon", "pw", []string{"Basic " + base64.StdEncoding.EncodeToString([]byte("moatpw"))}, false},
		{"bad base64", "pw", []string{"Basic !!!"}, false},
		{"other scheme", "pw", []string{"Bearer pw"}, false},
		{"empty", "pw", []string{""}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(Config{Check: allowHosts(), Credential: tc.credential})
			if err != nil {
				t.Fatal(err)
			}
			h := http.Header{}
			for _, v := range tc.values {
				h.Add("Proxy-Authorization", v)
			}
			if got := s.authorized(h); got != tc.want {
				t.Fatalf("authorized = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNewValidates(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		err  string
	}{
		{"no check", Config{}, "moat: proxy config: Check is required"},
		{"bad prefix", Config{Check: allowHosts(), AllowLocal: []netip.Prefix{{}}}, "not a valid prefix"},
		{"negative timeout", Config{Check: allowHosts(), HeaderTimeout: -1}, "must not be negative"},
		{"fine", Config{Check: allowHosts()}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg)
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("New = %v, want error containing %q", err, tc.err)
			}
		})
	}
}
