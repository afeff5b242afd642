package serve

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/moat-sandbox/moat/internal/session"
)

// openAPIDoc is the parsed document, for looking up response schemas.
type openAPIDoc struct {
	Paths map[string]map[string]json.RawMessage `json:"paths"`
}

type openAPIOp struct {
	Responses map[string]struct {
		Content map[string]struct {
			Schema struct {
				Ref string `json:"$ref"`
			} `json:"schema"`
		} `json:"content"`
	} `json:"responses"`
}

// validator compiles the document's component schemas, with the
// report-json schema they refer to.
type validator struct {
	t   *testing.T
	doc openAPIDoc
	c   *jsonschema.Compiler
	got map[string]*jsonschema.Schema
}

func newValidator(t *testing.T) *validator {
	t.Helper()
	var doc openAPIDoc
	if err := json.Unmarshal(OpenAPI, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	add := func(url string, data []byte) {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		if err := c.AddResource(url, v); err != nil {
			t.Fatalf("%s: %v", url, err)
		}
	}
	add("urn:moat:openapi.json", OpenAPI)
	report, err := os.ReadFile(filepath.Join("..", "..", "docs", "report-json.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	add("https://github.com/moat-sandbox/moat/docs/report-json.schema.json", report)
	return &validator{t: t, doc: doc, c: c, got: map[string]*jsonschema.Schema{}}
}

// schema compiles a component by its $ref.
func (v *validator) schema(ref string) *jsonschema.Schema {
	v.t.Helper()
	if s := v.got[ref]; s != nil {
		return s
	}
	s, err := v.c.Compile("urn:moat:openapi.json" + ref)
	if err != nil {
		v.t.Fatalf("compile %s: %v", ref, err)
	}
	v.got[ref] = s
	return s
}

// responseRef is the $ref of the schema the document gives for a
// response: its status or else default, and its media type.
func (v *validator) responseRef(pattern, method string, status int, ctype string) string {
	v.t.Helper()
	raw, ok := v.doc.Paths[pattern][strings.ToLower(method)]
	if !ok {
		v.t.Fatalf("the document has no %s %s", method, pattern)
	}
	var op openAPIOp
	if err := json.Unmarshal(raw, &op); err != nil {
		v.t.Fatal(err)
	}
	resp, ok := op.Responses[fmt.Sprint(status)]
	if !ok {
		resp, ok = op.Responses["default"]
	}
	if !ok {
		v.t.Fatalf("%s %s: the document has no response %d", method, pattern, status)
	}
	mt := strings.TrimSpace(strings.Split(ctype, ";")[0])
	c, ok := resp.Content[mt]
	if !ok || c.Schema.Ref == "" {
		v.t.Fatalf("%s %s %d: the document has no schema for %q", method, pattern, status, mt)
	}
	return c.Schema.Ref
}

// check validates a reply to pattern against the document.
func (v *validator) check(pattern, method string, r reply) {
	v.t.Helper()
	ref := v.responseRef(pattern, method, r.status, r.ctype)
	s := v.schema(ref)
	lines := [][]byte{r.body}
	if strings.HasPrefix(r.ctype, "application/x-ndjson") {
		lines = nil
		sc := bufio.NewScanner(bytes.NewReader(r.body))
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			lines = append(lines, append([]byte(nil), sc.Bytes()...))
		}
	}
	for _, l := range lines {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(l))
		if err != nil {
			v.t.Errorf("%s %s %d: not JSON: %v: %q", method, pattern, r.status, err, l)
			continue
		}
		if err := s.Validate(inst); err != nil {
			v.t.Errorf("%s %s %d: does not match %s: %v\n%s", method, pattern, r.status, ref, err, l)
		}
	}
}

// The document lists exactly the routes the server serves.
func TestOpenAPIListsEveryRoute(t *testing.T) {
	var doc openAPIDoc
	if err := json.Unmarshal(OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	var inDoc, served []string
	for p, ops := range doc.Paths {
		for m := range ops {
			if m != "parameters" {
				inDoc = append(inDoc, strings.ToUpper(m)+" "+p)
			}
		}
	}
	for _, r := range (&Server{}).routes() {
		served = append(served, r.Method+" "+r.Pattern)
	}
	sort.Strings(inDoc)
	sort.Strings(served)
	if len(served) == 0 {
		t.Fatal("control: the server lists no route")
	}
	if !slices.Equal(inDoc, served) {
		t.Errorf("the document and the server disagree:\ndocument: %q\nserver:   %q", inDoc, served)
	}
}

// Every route answers, over a real session, what the document says: the
// server's actual responses (successes, errors and stream lines) validate
// against its schemas, and every route is exercised with a success.
func TestServerAgreesWithOpenAPI(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	v := newValidator(t)
	ok := map[string]bool{}
	call := func(method, pattern, path string, body any, want int, hdr ...string) reply {
		t.Helper()
		r := ts.do(method, path, body, hdr...)
		if r.status != want {
			t.Fatalf("%s %s: %d %s, want %d", method, path, r.status, r.body, want)
		}
		v.check(pattern, method, r)
		if r.status < 300 {
			ok[method+" "+pattern] = true
		}
		return r
	}
	call("GET", "/v1/openapi.json", "/v1/openapi.json", nil, 200)
	call("GET", "/v1/policies", "/v1/policies", nil, 200)
	r := call("POST", "/v1/sessions", "/v1/sessions", session.CreateRequest{Name: "tour"}, 201)
	var info session.Info
	r.json(t, &info)
	s := "/v1/sessions/" + info.ID
	call("GET", "/v1/sessions", "/v1/sessions", nil, 200)
	call("GET", "/v1/sessions/{id}", s, nil, 200)
	call("POST", "/v1/sessions/{id}/run", s+"/run", map[string]any{"argv": []string{"sh", "-c", "printf 'a\\377'; echo err >&2; exit 3"}}, 200)
	r = call("POST", "/v1/sessions/{id}/run", s+"/run", map[string]any{"argv": []string{"sh", "-c", "echo one; echo two >&2"}, "stream": true}, 200)
	if !strings.Contains(string(r.body), `"type":"exit"`) {
		t.Errorf("the stream has no exit event: %s", r.body)
	}
	r = ts.do("POST", s+"/run", map[string]any{"argv": []string{"echo", "sse"}, "stream": true}, "Accept: text/event-stream")
	if r.status != 200 || !strings.HasPrefix(r.ctype, "text/event-stream") || !strings.Contains(string(r.body), "event: stdout\ndata: {") || !strings.Contains(string(r.body), "event: exit\n") {
		t.Errorf("server-sent events: %d %q %s", r.status, r.ctype, r.body)
	}
	call("POST", "/v1/sessions/{id}/run", s+"/run", map[string]any{"argv": []string{"no-such-command-here"}}, 422)
	call("POST", "/v1/sessions/{id}/processes", s+"/processes", map[string]any{"argv": []string{"sh", "-c", "echo started; exec sleep 60"}}, 201)
	call("GET", "/v1/sessions/{id}/processes", s+"/processes", nil, 200)
	call("GET", "/v1/sessions/{id}/processes/{pid}/output", s+"/processes/p1/output?stdout_from=0&stderr_from=0", nil, 200)
	call("POST", "/v1/sessions/{id}/processes/{pid}/signal", s+"/processes/p1/signal", map[string]string{"signal": "USR1"}, 200)
	call("DELETE", "/v1/sessions/{id}/processes/{pid}", s+"/processes/p1", nil, 200)
	call("GET", "/v1/sessions/{id}/processes/{pid}/output", s+"/processes/p9/output", nil, 404)
	t.Run("files", func(t *testing.T) {
		call("PUT", "/v1/sessions/{id}/files", s+"/files", map[string]any{"path": "a.txt", "content": map[string]string{"text": "hello"}, "mode": "0640"}, 200)
		call("PUT", "/v1/sessions/{id}/files", s+"/files", map[string]any{"path": "b.bin", "content": map[string]string{"base64": "/wA="}}, 200)
		r = call("GET", "/v1/sessions/{id}/files", s+"/files?path=b.bin", nil, 200)
		if !strings.Contains(string(r.body), `"base64":"/wA="`) {
			t.Errorf("binary content did not come back as base64: %s", r.body)
		}
		call("GET", "/v1/sessions/{id}/files", s+"/files?path=a.txt&max=2", nil, 200)
		call("GET", "/v1/sessions/{id}/files/list", s+"/files/list", nil, 200)
		call("GET", "/v1/sessions/{id}/files/stat", s+"/files/stat?path=a.txt", nil, 200)
		call("GET", "/v1/sessions/{id}/files/stat", s+"/files/stat?path=no-such", nil, 404)
	})
	call("GET", "/v1/sessions/{id}/report", s+"/report", nil, 200)
	call("GET", "/v1/sessions/{id}/refusals", s+"/refusals", nil, 200)
	call("DELETE", "/v1/sessions/{id}", s, nil, 200)
	call("GET", "/v1/sessions/{id}", s, nil, 404)
	for _, rt := range ts.srv.Routes() {
		if !ok[rt.Method+" "+rt.Pattern] {
			t.Errorf("%s %s was not exercised with a success", rt.Method, rt.Pattern)
		}
	}
}
