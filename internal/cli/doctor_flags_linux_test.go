package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestMoatDoctorFollowsRunFlags: doctor reports on the sandbox moat run
// would build from the same flags, the CLI's default level included, not on
// the library's zero Config.
func TestMoatDoctorFollowsRunFlags(t *testing.T) {
	requireSandbox(t)
	tests := []struct {
		name          string
		args          []string
		wantIsolation string
		wantMode      string
		wantText      []string
	}{
		{"no flags: what moat run does", nil, "default", "strict",
			[]string{"(isolation default, strict enforcement)", "isolation: default:", "moat run: works with these flags"}},
		{"isolation strict", []string{"--isolation", "strict"}, "strict", "strict",
			[]string{"(isolation strict, strict enforcement)", "isolation: strict:"}},
		{"best effort", []string{"--best-effort", "--isolation", "permissive"}, "permissive", "best-effort",
			[]string{"(isolation permissive, best-effort enforcement)"}},
		{"network policy", []string{"--network", "allow-list", "--allow-domain", "pypi.org"}, "default", "strict",
			[]string{"the policy proxy listens on 127.0.0.1:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runMoat(t, nil, append([]string{"doctor"}, tt.args...)...)
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("moat doctor %q: exit %d, stderr %q", tt.args, r.code, r.stderr)
			}
			for _, w := range tt.wantText {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("output lacks %q:\n%s", w, r.stdout)
				}
			}
			if strings.Contains(r.stdout, "(best-effort)") && tt.wantMode == "strict" {
				t.Errorf("a strict run is headed best-effort:\n%s", r.stdout)
			}
			r = runMoat(t, nil, append([]string{"doctor", "--json"}, tt.args...)...)
			var got doctorReport
			if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
				t.Fatalf("--json: %v\n%s", err, r.stdout)
			}
			if got.Isolation != tt.wantIsolation || got.Enforcement.Mode != tt.wantMode || !got.Run.OK {
				t.Errorf("--json: isolation %q, mode %q, run %+v; want %q, %q, ok", got.Isolation, got.Enforcement.Mode, got.Run, tt.wantIsolation, tt.wantMode)
			}
		})
	}
	// A bad flag is a usage error, as for moat run.
	if r := runMoat(t, nil, "doctor", "--isolation", "bogus"); r.code != exitUsage {
		t.Errorf("moat doctor --isolation bogus: exit %d, want %d", r.code, exitUsage)
	}
}
