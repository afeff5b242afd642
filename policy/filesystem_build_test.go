package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

// TestApplyFilesystemBuildMode: in build mode the cwd stands in for the
// working directory, so a writable cwd and writable targets are
// executable too; without it they stay write-xor-execute, and a
// read-only cwd stays read-only either way.
func TestApplyFilesystemBuildMode(t *testing.T) {
	for _, tt := range []struct {
		name  string
		build bool
		writ  []string
		want  map[string]moat.Access // "." is the cwd
	}{
		{"build, writable cwd", true, []string{"."}, map[string]moat.Access{".": moat.READ | moat.WRITE | moat.EXEC}},
		{"build, writable target", true, []string{"out/"}, map[string]moat.Access{".": moat.READ, "out": moat.READ | moat.WRITE | moat.EXEC}},
		{"build, read-only cwd", true, nil, map[string]moat.Access{".": moat.READ}},
		{"control: no build", false, []string{".", "out/"}, map[string]moat.Access{".": moat.READ | moat.WRITE}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cwd, _ := filepath.EvalSymlinks(t.TempDir())
			if err := os.Mkdir(filepath.Join(cwd, "out"), 0o755); err != nil {
				t.Fatal(err)
			}
			cfg := moat.Config{Build: tt.build}
			if err := ApplyFilesystem(&cfg, cwd, "", nil, tt.writ); err != nil {
				t.Fatal(err)
			}
			got := map[string]moat.Access{}
			for _, g := range cfg.Grants {
				rel, _ := filepath.Rel(cwd, g.Path)
				got[rel] = g.Access
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("grant %s = %v, want %v (all: %v)", k, got[k], v, got)
				}
			}
		})
	}
}

// TestExecHardLinkGaps: a denied file with a second name outside the cwd,
// which moat cannot deny, refuses the policy (naming the file and the
// opt-in); with "hardLinkGaps": "warn" it is a warning of the plan
// instead. The control, a second name inside the cwd, is denied and
// neither refuses nor warns.
func TestExecHardLinkGaps(t *testing.T) {
	for _, tt := range []struct {
		name, mode string
		outside    bool
		wantErr    bool
	}{
		{"other name outside the cwd", "", true, true},
		{"other name outside, refuse", HardLinkGapsRefuse, true, true},
		{"other name outside, warn", HardLinkGapsWarn, true, false},
		{"control: other name inside", "", false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base, _ := filepath.EvalSymlinks(t.TempDir())
			cwd := filepath.Join(base, "proj")
			if err := os.Mkdir(cwd, 0o755); err != nil {
				t.Fatal(err)
			}
			secret := filepath.Join(cwd, ".env")
			if err := os.WriteFile(secret, []byte("S"), 0o644); err != nil {
				t.Fatal(err)
			}
			other := filepath.Join(cwd, "alias")
			if tt.outside {
				other = filepath.Join(base, "alias")
			}
			if err := os.Link(secret, other); err != nil {
				t.Fatal(err)
			}
			doc := `{"command":["true"],"filesystem":{"deny":[".env"]}}`
			if tt.mode != "" {
				doc = `{"command":["true"],"filesystem":{"deny":[".env"],"hardLinkGaps":"` + tt.mode + `"}}`
			}
			d, err := ParseDocument([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			x, err := d.Exec(ExecHost{Dir: cwd})
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), "denied file "+secret+" (1 more)") || !strings.Contains(err.Error(), `hardLinkGaps to "warn"`) {
					t.Fatalf("err = %v, want the gap refused", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			warned := len(x.Warnings) == 1 && strings.Contains(x.Warnings[0], secret) && strings.HasPrefix(x.Warnings[0], "moat: warning: ")
			if warned != tt.outside || (!tt.outside && len(x.Warnings) > 0) {
				t.Errorf("Warnings = %q", x.Warnings)
			}
			if !tt.outside && !strings.Contains(strings.Join(x.Config.Deny, "\n"), other) {
				t.Errorf("Deny = %q, want %s too", x.Config.Deny, other)
			}
		})
	}
}
