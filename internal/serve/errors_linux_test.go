package serve

import (
	"net/http"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/session"
	"github.com/moat-sandbox/moat/policy"
)

// Bad input gets its stable code and status, as a JSON body, and the
// server stays up.
func TestBadInput(t *testing.T) {
	ts := newTestServer(t, serverOpts{session: session.Options{Policies: []session.Policy{
		testPolicy(t, "default", nil),
		testPolicy(t, "small", func(r *policy.Result) { r.Config.Limits.MemoryBytes = 256 << 20 }),
	}}})
	id := ts.create(session.CreateRequest{})
	s := "/v1/sessions/" + id
	big := `{"argv":["true"],"env":{"X":"` + strings.Repeat("a", maxOtherBody) + `"}}`
	bigFile := `{"path":"f","content":{"text":"` + strings.Repeat("a", fileBodyLimit) + `"}}`
	for _, tc := range []struct {
		name, method, path string
		body               any
		hdr                []string
		status             int
		code               string
	}{
		{"malformed JSON", "POST", "/v1/sessions", `{"policy":`, nil, 400, "bad_request"},
		{"not an object", "POST", "/v1/sessions", `[1,2]`, nil, 400, "bad_request"},
		{"unknown field", "POST", "/v1/sessions", `{"policy":"default","polcy":"x"}`, nil, 400, "bad_request"},
		{"unknown nested field", "POST", "/v1/sessions", `{"narrow":{"limits":{"memory":1}}}`, nil, 400, "bad_request"},
		{"two values", "POST", "/v1/sessions", `{} {}`, nil, 400, "bad_request"},
		{"a key in upper case", "POST", "/v1/sessions", `{"POLICY":"default"}`, nil, 400, "bad_request"},
		{"a capitalized key", "POST", "/v1/sessions", `{"Narrow":{}}`, nil, 400, "bad_request"},
		{"a nested key in upper case", "POST", "/v1/sessions", `{"narrow":{"NETWORK":"deny"}}`, nil, 400, "bad_request"},
		{"a narrowing dropped by a duplicate", "POST", "/v1/sessions", `{"Narrow":{"NETWORK":"deny"},"narrow":{}}`, nil, 400, "bad_request"},
		{"a key given twice", "POST", "/v1/sessions", `{"narrow":{"network":"deny"},"narrow":{}}`, nil, 400, "bad_request"},
		{"a nested key given twice", "POST", "/v1/sessions", `{"narrow":{"limits":{"processes":1,"processes":99}}}`, nil, 400, "bad_request"},
		{"a grant given twice", "POST", "/v1/sessions", `{"narrow":{"grants":{"/usr":"none","/usr":"r"}}}`, nil, 400, "bad_request"},
		{"an env name given twice", "POST", s + "/run", `{"argv":["true"],"env":{"A":"1","A":"2"}}`, nil, 400, "bad_request"},
		{"a bytes key in another case", "POST", s + "/run", `{"argv":["cat"],"stdin":{"Text":"a"}}`, nil, 400, "bad_request"},
		{"a file key in another case", "PUT", s + "/files", `{"Path":"f","content":{"text":""}}`, nil, 400, "bad_request"},
		{"a signal given twice", "POST", s + "/processes/p1/signal", `{"signal":"TERM","signal":"KILL"}`, nil, 400, "bad_request"},
		{"a relative grant path", "POST", "/v1/sessions", `{"narrow":{"grants":{"usr":"none"}}}`, nil, 400, "bad_request"},
		{"a write-only grant", "POST", "/v1/sessions", `{"narrow":{"grants":{"/usr":"w"}}}`, nil, 400, "bad_request"},
		{"empty body", "POST", "/v1/sessions", ``, nil, 400, "bad_request"},
		{"wrong content type", "POST", "/v1/sessions", `{}`, []string{"Content-Type: text/plain"}, 400, "bad_request"},
		{"unknown policy", "POST", "/v1/sessions", `{"policy":"nope"}`, nil, 404, "unknown_policy"},
		{"widening", "POST", "/v1/sessions", `{"policy":"small","narrow":{"limits":{"memory_bytes":1073741824}}}`, nil, 403, "widen_refused"},
		{"widening the network", "POST", "/v1/sessions", `{"narrow":{"network":"allow-list","allow_domains":["example.com"]}}`, nil, 403, "widen_refused"},
		{"oversized body", "POST", s + "/run", big, nil, 413, "too_large"},
		{"oversized file", "PUT", s + "/files", bigFile, nil, 413, "too_large"},
		{"bytes with both", "POST", s + "/run", `{"argv":["cat"],"stdin":{"text":"a","base64":"YQ=="}}`, nil, 400, "bad_request"},
		{"bytes bad base64", "POST", s + "/run", `{"argv":["cat"],"stdin":{"base64":"!!"}}`, nil, 400, "bad_request"},
		{"empty argv", "POST", s + "/run", `{"argv":[]}`, nil, 400, "bad_request"},
		{"negative timeout", "POST", s + "/run", `{"argv":["true"],"timeout_ms":-1}`, nil, 400, "bad_request"},
		{"command not found", "POST", s + "/run", `{"argv":["no-such-command-here"]}`, nil, 422, "start_failed"},
		{"bad signal", "POST", s + "/processes/p1/signal", `{"signal":"STOP"}`, nil, 400, "bad_request"},
		{"no such process", "DELETE", s + "/processes/p7", nil, nil, 404, "not_found"},
		{"bad offset", "GET", s + "/processes/p1/output?stdout_from=-1", nil, nil, 400, "bad_request"},
		{"missing path", "GET", s + "/files/stat", nil, nil, 400, "bad_request"},
		{"bad mode", "PUT", s + "/files", `{"path":"f","content":{"text":""},"mode":"rwx"}`, nil, 400, "bad_request"},
		{"path outside", "GET", s + "/files?path=/etc/passwd", nil, nil, 403, "path_refused"},
		{"a directory read as a file", "GET", s + "/files?path=.", nil, nil, 409, "not_regular_file"},
		{"no such session", "GET", "/v1/sessions/s-nope", nil, nil, 404, "not_found"},
		{"no such route", "GET", "/v2/anything", nil, nil, 404, "not_found"},
		{"wrong method", "PATCH", "/v1/sessions", nil, nil, 405, "method_not_allowed"},
		{"wrong method on a session", "POST", s, nil, nil, 405, "method_not_allowed"},
		{"wrong token", "GET", "/v1/sessions", nil, []string{"Authorization: Bearer 00"}, 401, "unauthorized"},
		{"not a bearer", "GET", "/v1/sessions", nil, []string{"Authorization: Basic eDp5"}, 401, "unauthorized"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ts.do(tc.method, tc.path, tc.body, tc.hdr...)
			if r.status != tc.status || r.errCode() != tc.code || !strings.HasPrefix(r.ctype, "application/json") {
				t.Errorf("%s %s: %d %q %s, want %d %s", tc.method, tc.path, r.status, r.ctype, trimmed(string(r.body)), tc.status, tc.code)
			}
		})
	}
	// Control: the server is up and the session answers.
	if r := ts.do("POST", s+"/run", `{"argv":["echo","ok"]}`); r.status != http.StatusOK || !strings.Contains(string(r.body), `"text":"ok\n"`) {
		t.Errorf("after bad input: %d %s", r.status, r.body)
	}
	// A closed session is gone: later calls say so.
	if r := ts.do("DELETE", s, nil); r.status != 200 {
		t.Fatalf("close: %d %s", r.status, r.body)
	}
	if r := ts.do("POST", s+"/run", `{"argv":["true"]}`); r.status/100 != 4 {
		t.Errorf("run in a closed session: %d %s", r.status, r.body)
	}
}
