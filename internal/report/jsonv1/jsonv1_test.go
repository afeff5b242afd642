package jsonv1

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/bytestr"
	"github.com/moat-sandbox/moat/internal/golden"
	"github.com/moat-sandbox/moat/internal/report/jsonv1/schematest"
	"github.com/moat-sandbox/moat/internal/settings"
)

// sampleReport is a small Report, the same in every golden file.
func sampleReport() moat.Report {
	return moat.Report{Platform: "linux", Enforcement: moat.Strict, Layers: []moat.Layer{
		{Name: "landlock", Active: true, Detail: "ABI 7"},
		{Name: "seccomp", Active: false, Detail: "not here"},
	}}
}

func intp(n int) *int { return &n }

// goldenCases are the documents whose JSON is pinned in testdata: the
// shape of version 1 is theirs.
func goldenCases() map[string]Document {
	base := func(refusals ...moat.Refusal) Document {
		d := New("v1.2.3", "run")
		d.WorkDir = "/home/u/project"
		d.Started = true
		d.Outcome.StartedAt = "2026-01-02T03:04:05.678Z"
		d.Outcome.DurationMS = 250
		d.Refusals = FromRefusals(refusals)
		d.Report = FromReport(sampleReport())
		return d
	}
	clean := base()
	clean.Outcome.CommandExitCode = intp(0)

	dns := base(moat.Refusal{Kind: "dns", Subject: "pypi.org", Detail: "the sandbox has no network",
		Setting: "network.allow-domain", Value: "pypi.org", Allow: settings.Allow("network.allow-domain", "pypi.org")},
		moat.Refusal{Kind: "control-path", Subject: "/home/u/project/.git/hooks/pre-commit", Detail: "created in the sandbox; moved aside"})
	dns.Outcome.ExitCode, dns.Outcome.CommandExitCode = 1, intp(1)

	timeout := base(moat.Refusal{Kind: "limit", Subject: "timeout", Detail: "killed after 1s",
		Setting: "limits.timeout", Allow: settings.Allow("limits.timeout", "")})
	timeout.Outcome.ExitCode, timeout.Outcome.Signal, timeout.Outcome.SignalNumber = 137, "SIGKILL", 9
	timeout.Outcome.Limit = "timeout"
	timeout.Outcome.Reason = "limit: timeout: killed after 1s (--timeout DURATION, Limits.Timeout)"

	notStarted := New("devel", "exec")
	notStarted.Outcome.ExitCode, notStarted.Outcome.ErrorKind = 2, "usage"
	notStarted.Outcome.Error = "host cannot enforce the sandbox: landlock"
	notStarted.Outcome.StartedAt = "2026-01-02T03:04:05Z"

	return map[string]Document{"clean": clean, "dns": dns, "timeout": timeout, "not-started": notStarted}
}

func TestGolden(t *testing.T) {
	for name, d := range goldenCases() {
		t.Run(name, func(t *testing.T) {
			got, err := Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", name+".json")
			golden.Check(t, path, string(got))
			if err := schematest.Validate(got); err != nil {
				t.Errorf("%s does not conform to the schema: %v", path, err)
			}
			back, err := Parse(got)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := Marshal(back)
			if !bytes.Equal(again, got) {
				t.Errorf("Parse then Marshal changed the document:\n%s", again)
			}
		})
	}
}

// The schema is not vacuous: documents that break the shape fail it.
func TestSchemaRejects(t *testing.T) {
	good, err := Marshal(goldenCases()["dns"])
	if err != nil {
		t.Fatal(err)
	}
	if err := schematest.Validate(good); err != nil {
		t.Fatalf("control: the good document fails: %v", err)
	}
	cases := map[string]func(m map[string]any){
		"version 2":        func(m map[string]any) { m["version"] = 2 },
		"no refusals":      func(m map[string]any) { delete(m, "refusals") },
		"unknown field":    func(m map[string]any) { m["extra"] = true },
		"bad command":      func(m map[string]any) { m["command"] = "doctor" },
		"setting, no flag": func(m map[string]any) { ref(m)["flag"] = "" },
		"allow, no setting": func(m map[string]any) {
			ref(m)["setting"], ref(m)["flag"], ref(m)["config_field"], ref(m)["value"], ref(m)["args"] = "", "", "", "", []any{}
		},
		"undotted setting": func(m map[string]any) { ref(m)["setting"] = "Network Allow" },
		"null args":        func(m map[string]any) { ref(m)["args"] = nil },
		"exit code 300":    func(m map[string]any) { m["outcome"].(map[string]any)["exit_code"] = 300 },
		"unknown limit":    func(m map[string]any) { m["outcome"].(map[string]any)["limit"] = "patience" },
		"bad time":         func(m map[string]any) { m["outcome"].(map[string]any)["started_at"] = "yesterday" },
		"layer without name": func(m map[string]any) {
			delete(m["report"].(map[string]any)["layers"].([]any)[0].(map[string]any), "name")
		},
		"enforcement unknown": func(m map[string]any) { m["report"].(map[string]any)["enforcement"] = "loose" },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal(good, &m); err != nil {
				t.Fatal(err)
			}
			mutate(m)
			b, _ := json.Marshal(m)
			if err := schematest.Validate(b); err == nil {
				t.Errorf("the schema accepts %s", b)
			}
		})
	}
}

func ref(m map[string]any) map[string]any { return m["refusals"].([]any)[0].(map[string]any) }

// Every setting converts with its flag, field and args from the table.
func TestFromRefusalEverySetting(t *testing.T) {
	for _, s := range settings.All() {
		r := FromRefusal(moat.Refusal{Kind: "k", Subject: "s", Setting: s.ID, Value: "v", Allow: settings.Allow(s.ID, "v")})
		if r.Setting != s.ID || r.Flag != s.Flag || r.ConfigField != s.Field || r.Value != "v" {
			t.Errorf("%s: converted to %+v", s.ID, r)
		}
		named := slices.ContainsFunc(r.Args, func(a string) bool { return a == s.Flag || strings.HasPrefix(a, s.Flag+"=") })
		if !named || !strings.Contains(r.Allow, s.Flag) {
			t.Errorf("%s: args %q, allow %q do not name %s", s.ID, r.Args, r.Allow, s.Flag)
		}
	}
	// An id that is not in the table is not passed on as one.
	if r := FromRefusal(moat.Refusal{Kind: "k", Setting: "no.such"}); r.Setting != "" || r.Args == nil {
		t.Errorf("unknown setting converted to %+v", r)
	}
}

func TestParse(t *testing.T) {
	good, _ := Marshal(goldenCases()["clean"])
	cases := []struct {
		name, in, wantErr string
	}{
		{"good", string(good), ""},
		{"newer field ignored", strings.Replace(string(good), `"version": 1,`, `"version": 1, "later": {"x": 1},`, 1), ""},
		{"no version", `{"refusals": []}`, "no version"},
		{"version 2", `{"version": 2, "refusals": []}`, "version 2, want 1"},
		{"null refusals", `{"version": 1, "refusals": null}`, "no refusals list"},
		{"not JSON", `{"version": 1,`, "unexpected end"},
		{"an array", `[1]`, "cannot unmarshal array"},
		{"too big", `{"version": 1, "refusals": [], "x": "` + strings.Repeat("a", MaxSize) + `"}`, "more than"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.in))
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// Parse never panics, and what it accepts marshals again to a document
// that it accepts.
func FuzzParse(f *testing.F) {
	for _, d := range goldenCases() {
		b, _ := Marshal(d)
		f.Add(b)
	}
	f.Add([]byte(`{"version": 1, "refusals": []}`))
	f.Add([]byte(`{"version": 1.0, "refusals": [{}], "report": null}`))
	f.Add([]byte(`{"version": "1"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Parse(data)
		if err != nil {
			return
		}
		b, err := Marshal(d)
		if err != nil {
			t.Fatalf("Marshal of a parsed document: %v", err)
		}
		if _, err := Parse(b); err != nil {
			t.Fatalf("reparse: %v\n%s", err, b)
		}
	})
}

// A subject that is not valid UTF-8 (a Linux name may hold any byte) keeps
// its exact bytes through the document instead of becoming U+FFFD, which
// would name another file. Control: a valid subject is unchanged.
func TestMarshalKeepsNonUTF8Bytes(t *testing.T) {
	for _, subject := range []string{"/w/bad\xffname", "/w/plain-name"} {
		b, err := Marshal(Document{Version: 1, Refusals: []Refusal{{Kind: "path", Subject: subject}}})
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("\uFFFD")) {
			t.Fatalf("%q became U+FFFD: %s", subject, b)
		}
		d, err := Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		got := d.Refusals[0].Subject
		if got != bytestr.Escape(subject) || bytestr.Unescape(got) != subject {
			t.Fatalf("subject %q came back as %q", subject, got)
		}
	}
}
