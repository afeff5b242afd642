package serve

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/session"
	"github.com/moat-sandbox/moat/policy"
)

// A grant narrowed over the API is enforced as asked, and the session's
// summary says so: narrowed to "r", the sandbox reads the grant but
// cannot write it, and it is listed readable; the control narrowed to
// "rw" writes it and is listed writable. "w" (which would still allow
// reading) and a relative path are refused, naming what is accepted.
func TestNarrowedGrantEnforced(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, serverOpts{session: session.Options{Policies: []session.Policy{
		testPolicy(t, "granted", func(r *policy.Result) {
			r.Grants = append(r.Grants, moat.PathRequest{Path: dir, Access: moat.READ | moat.WRITE})
		}),
	}}})
	for _, tc := range []struct {
		access, want string
	}{
		{"w", `"none", "r", "rw", "rx", "rwx"`},
		{"x", `"none", "r", "rw", "rx", "rwx"`},
		{"wr", `"none", "r", "rw", "rx", "rwx"`},
	} {
		r := ts.do("POST", "/v1/sessions", map[string]any{"narrow": map[string]any{"grants": map[string]string{dir: tc.access}}})
		if r.status != http.StatusBadRequest || r.errCode() != "bad_request" || !strings.Contains(string(r.body), strings.ReplaceAll(tc.want, `"`, `\"`)) {
			t.Errorf("narrowed to %q: %d %s", tc.access, r.status, r.body)
		}
	}
	rel, err := filepath.Rel(mustGetwd(t), dir)
	if err != nil {
		t.Fatal(err)
	}
	if r := ts.do("POST", "/v1/sessions", map[string]any{"narrow": map[string]any{"grants": map[string]string{rel: "r"}}}); r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "absolute") {
		t.Errorf("a relative grant path %q: %d %s", rel, r.status, r.body)
	}
	write := `{"argv":["sh","-c","cat ` + dir + `/f && echo new > ` + dir + `/f && echo wrote"]}`
	for _, tc := range []struct {
		access   string
		writable bool
	}{{"r", false}, {"rw", true}} {
		r := ts.do("POST", "/v1/sessions", map[string]any{"narrow": map[string]any{"grants": map[string]string{dir: tc.access}}})
		if r.status != http.StatusCreated {
			t.Fatalf("narrowed to %q: %d %s", tc.access, r.status, r.body)
		}
		var info session.Info
		r.json(t, &info)
		if slices.Contains(info.Allows.Writable, dir) != tc.writable || slices.Contains(info.Allows.Readable, dir) == tc.writable {
			t.Errorf("narrowed to %q: allows writable %q readable %q", tc.access, info.Allows.Writable, info.Allows.Readable)
		}
		run := ts.do("POST", "/v1/sessions/"+info.ID+"/run", write)
		var res struct {
			ExitCode int   `json:"exit_code"`
			Stdout   Bytes `json:"stdout"`
		}
		run.json(t, &res)
		if !strings.Contains(string(res.Stdout), "secret") {
			t.Errorf("narrowed to %q: the grant is not readable: %s", tc.access, run.body)
		}
		if wrote := strings.Contains(string(res.Stdout), "wrote"); wrote != tc.writable {
			t.Errorf("narrowed to %q: wrote=%v, want %v: %s", tc.access, wrote, tc.writable, run.body)
		}
		if r := ts.do("DELETE", "/v1/sessions/"+info.ID, nil); r.status != http.StatusOK {
			t.Errorf("close: %d %s", r.status, r.body)
		}
	}
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}
