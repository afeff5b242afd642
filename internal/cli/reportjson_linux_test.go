package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/report/jsonv1"
	"github.com/moat-sandbox/moat/internal/report/jsonv1/schematest"
)

// readReport reads the report at path, checks it against the schema and
// parses it.
func readReport(t *testing.T, path string) jsonv1.Document {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("report: %v", err)
	}
	if err := schematest.Validate(data); err != nil {
		t.Fatalf("report does not conform to the schema: %v\n%s", err, data)
	}
	d, err := jsonv1.Parse(data)
	if err != nil {
		t.Fatalf("report: %v\n%s", err, data)
	}
	return d
}

// findRefusal returns the first refusal of kind, or fails.
func findRefusal(t *testing.T, d jsonv1.Document, kind string) jsonv1.Refusal {
	t.Helper()
	for _, r := range d.Refusals {
		if r.Kind == kind {
			return r
		}
	}
	t.Fatalf("no %s refusal in %+v", kind, d.Refusals)
	return jsonv1.Refusal{}
}

// leftovers lists what dir holds besides the names in keep.
func leftovers(t *testing.T, dir string, keep ...string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if !slices.Contains(keep, e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestReportJSON: --report-json writes, when moat ends, a document that
// conforms to the published schema, with the outcome and every refusal
// carrying its setting and flag; --quiet silences the lines, not the file.
func TestReportJSON(t *testing.T) {
	requireSandbox(t)
	t.Run("clean run", func(t *testing.T) {
		t.Parallel()
		out := filepath.Join(t.TempDir(), "r.json")
		r := runMoat(t, nil, "run", "--report-json", out, "--", "true")
		if p := exits(0)(r); p != "" || r.stderr != "" {
			t.Fatalf("%s; stderr %q", p, r.stderr)
		}
		d := readReport(t, out)
		if d.Command != "run" || !d.Started || d.Outcome.ExitCode != 0 || d.Outcome.CommandExitCode == nil || *d.Outcome.CommandExitCode != 0 ||
			len(d.Refusals) != 0 || d.Report == nil || len(d.Report.Layers) == 0 || d.WorkDir == "" || d.Outcome.Error != "" {
			t.Errorf("report %+v", d)
		}
		if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("report file mode: %v %v, want 0600", fi.Mode(), err)
		}
		if l := leftovers(t, filepath.Dir(out), "r.json"); len(l) != 0 {
			t.Errorf("left beside the report: %q", l)
		}
	})
	for _, quiet := range []bool{false, true} {
		name := map[bool]string{false: "refused name", true: "refused name, quiet"}[quiet]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "r.json")
			args := []string{"run", "--report-json", out}
			if quiet {
				args = append(args, "--quiet")
			}
			args = append(args, "--", "sh", "-c", "getent hosts pypi.moat-json.invalid; exit 3")
			r := runMoat(t, nil, args...)
			if p := exits(3)(r); p != "" {
				t.Fatal(p)
			}
			if printed := strings.Contains(r.stderr, "moat: dns: pypi.moat-json.invalid"); printed == quiet {
				t.Errorf("stderr %q (quiet %v)", r.stderr, quiet)
			}
			d := readReport(t, out)
			ref := findRefusal(t, d, "dns")
			want := []string{"--network", "allow-list", "--allow-domain", "pypi.moat-json.invalid"}
			if ref.Subject != "pypi.moat-json.invalid" || ref.Setting != "network.allow-domain" || ref.Flag != "--allow-domain" ||
				ref.ConfigField != "Config.Network" || !slices.Equal(ref.Args, want) {
				t.Errorf("dns refusal %+v", ref)
			}
			if *d.Outcome.CommandExitCode != 3 || d.Outcome.ExitCode != 3 {
				t.Errorf("outcome %+v", d.Outcome)
			}
		})
	}
	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		out := filepath.Join(t.TempDir(), "r.json")
		r := runMoat(t, nil, "run", "--timeout", "1s", "--report-json", out, "--", "sleep", "30")
		d := readReport(t, out)
		if d.Outcome.ExitCode != r.code || r.code < 128 || d.Outcome.Limit != "timeout" || d.Outcome.Signal == "" ||
			d.Outcome.CommandExitCode != nil || !strings.Contains(d.Outcome.Reason, "--timeout") || d.Outcome.DurationMS < 900 {
			t.Errorf("exit %d, outcome %+v", r.code, d.Outcome)
		}
		if ref := findRefusal(t, d, "limit"); ref.Setting != "limits.timeout" || ref.Flag != "--timeout" || ref.ConfigField != "Limits.Timeout" {
			t.Errorf("limit refusal %+v", ref)
		}
	})
	// A program written in the sandbox cannot be executed (exit 126), which
	// names --build; with --build it runs, and nothing is refused.
	for _, build := range []bool{false, true} {
		t.Run(map[bool]string{false: "exec 126", true: "exec 126 control, --build"}[build], func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			out := filepath.Join(dir, "r.json")
			work := filepath.Join(dir, "work")
			args := []string{"run", "--workdir", work, "--report-json", out}
			if build {
				args = append(args, "--build")
			}
			args = append(args, "--", "sh", "-c", `printf '#!/bin/sh\necho ran\n' > app && chmod +x app && ./app`)
			r := runMoat(t, nil, args...)
			d := readReport(t, out)
			if build {
				if r.code != 0 || r.stdout != "ran\n" || len(d.Refusals) != 0 {
					t.Errorf("with --build: exit %d, stdout %q, refusals %+v", r.code, r.stdout, d.Refusals)
				}
				return
			}
			if r.code != 126 || d.Outcome.ExitCode != 126 || *d.Outcome.CommandExitCode != 126 {
				t.Errorf("exit %d, outcome %+v", r.code, d.Outcome)
			}
			if ref := findRefusal(t, d, "exec"); ref.Setting != "build" || ref.Flag != "--build" || !slices.Equal(ref.Args, []string{"--build"}) {
				t.Errorf("exec refusal %+v", ref)
			}
		})
	}
	t.Run("not found", func(t *testing.T) {
		t.Parallel()
		out := filepath.Join(t.TempDir(), "r.json")
		r := runMoat(t, nil, "run", "--report-json", out, "--", "no-such-command-moat-json")
		d := readReport(t, out)
		if r.code != 127 || d.Started || d.Outcome.ExitCode != 127 || d.Outcome.ErrorKind != "not-found" || d.Outcome.Error == "" || d.Report == nil {
			t.Errorf("exit %d, report %+v", r.code, d)
		}
	})
	t.Run("exec", func(t *testing.T) {
		t.Parallel()
		out := filepath.Join(t.TempDir(), "r.json")
		r := runMoat(t, nil, "exec", "--report-json", out, "--", "sh", "-c", "exit 4")
		d := readReport(t, out)
		if r.code != 4 || d.Command != "exec" || d.Outcome.ExitCode != 4 || *d.Outcome.CommandExitCode != 4 {
			t.Errorf("exit %d, report %+v", r.code, d)
		}
	})
}

// TestReportJSONPlace: the report's place is checked as --audit-log's: one
// the sandbox can write, a link at FILE, a missing directory are refused
// with exit 2 and one line before anything runs, and nothing is created;
// the same run with a place outside writes the report (the control).
func TestReportJSONPlace(t *testing.T) {
	requireSandbox(t)
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	grant := filepath.Join(dir, "grant")
	outside := filepath.Join(dir, "outside")
	for _, d := range []string{work, grant, outside} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	victim := filepath.Join(outside, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(outside, "link.json")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	existing := filepath.Join(outside, "existing.json")
	if err := os.WriteFile(existing, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	newWork := filepath.Join(outside, "new-work")
	auditLog := filepath.Join(outside, "audit.jsonl")
	cases := []struct {
		name    string
		file    string
		extra   []string
		refused string // a part of the one line; "" for the control
	}{
		// A working directory moat would create, and an audit log it would
		// open, are not made for a refused report.
		{"in a working directory to be made", filepath.Join(newWork, "r.json"), []string{"--workdir", newWork}, "which the sandbox can write"},
		{"beside an audit log", filepath.Join(work, "r.json"), []string{"--network", "allow-all", "--audit-log", auditLog}, "which the sandbox can write"},
		{"in the working directory", filepath.Join(work, "r.json"), nil, "which the sandbox can write"},
		{"in a writable grant", filepath.Join(grant, "r.json"), []string{"--writable", grant}, "which the sandbox can write"},
		{"the working directory itself", work, nil, "which the sandbox can write"},
		{"a link at FILE", link, nil, "symbolic link"},
		{"a missing directory", filepath.Join(outside, "none", "r.json"), nil, "its directory"},
		{"empty", "", nil, "empty path"},
		{"control: a new file outside", filepath.Join(outside, "new.json"), nil, ""},
		{"control: an existing file outside", existing, nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := map[string][]string{}
			for _, d := range []string{work, grant, outside} {
				before[d] = leftovers(t, d)
			}
			args := append([]string{"run", "--workdir", work, "--report-json", tc.file}, tc.extra...)
			args = append(args, "--", "true")
			r := runMoat(t, nil, args...)
			if tc.refused == "" {
				if r.code != 0 {
					t.Fatalf("control: exit %d, stderr %q", r.code, r.stderr)
				}
				if d := readReport(t, tc.file); d.Outcome.ExitCode != 0 || !d.Started {
					t.Errorf("control: report %+v", d)
				}
				return
			}
			for _, e := range []expect{exits(exitUsage), oneMoatLine("--report-json", tc.refused)} {
				if p := e(r); p != "" {
					t.Error(p)
				}
			}
			for _, p := range []string{newWork, auditLog} {
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("%s was made for a refused report", p)
				}
			}
			for _, d := range []string{work, grant, outside} {
				if got := leftovers(t, d); !slices.Equal(got, before[d]) {
					t.Errorf("%s holds %q after the refusal, %q before", d, got, before[d])
				}
			}
			if b, _ := os.ReadFile(victim); string(b) != "keep" {
				t.Errorf("the link's target was written: %q", b)
			}
			if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("the link was replaced: %v %v", fi, err)
			}
		})
	}
}

// TestReportJSONExecPlace: under moat exec the places the policy makes
// writable count too: a report in one is refused (exit 2, nothing made);
// the same report beside the cwd is written (the control).
func TestReportJSONExecPlace(t *testing.T) {
	requireSandbox(t)
	dir := t.TempDir()
	cwd := filepath.Join(dir, "cwd")
	if err := os.MkdirAll(filepath.Join(cwd, "out"), 0o700); err != nil {
		t.Fatal(err)
	}
	pol := filepath.Join(dir, "policy.json")
	doc := `{"command": ["true"], "cwd": "` + cwd + `", "filesystem": {"writable": ["out/"]}}`
	if err := os.WriteFile(pol, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	refused := filepath.Join(cwd, "out", "r.json")
	r := runMoat(t, nil, "exec", "--report-json", refused, "--policy", pol)
	for _, e := range []expect{exits(exitUsage), oneMoatLine("--report-json", "which the sandbox can write")} {
		if p := e(r); p != "" {
			t.Error(p)
		}
	}
	if l := leftovers(t, filepath.Join(cwd, "out")); len(l) != 0 {
		t.Errorf("left in the writable place: %q", l)
	}
	control := filepath.Join(dir, "r.json")
	r = runMoat(t, nil, "exec", "--report-json", control, "--policy", pol)
	if r.code != 0 {
		t.Fatalf("control: exit %d, stderr %q", r.code, r.stderr)
	}
	if d := readReport(t, control); d.Command != "exec" || !d.Started {
		t.Errorf("control: report %+v", d)
	}
}
