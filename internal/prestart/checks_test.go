package prestart

import (
	"testing"

	"github.com/moat-sandbox/moat/internal/refusal"
	"github.com/moat-sandbox/moat/internal/viewcheck"
)

// Each finding names the setting that would let the sandbox use its path
// as needed: a denied path none, a written place without exec build mode,
// and a protected path the switch that lifts its protection as well.
func TestAllowFor(t *testing.T) {
	c := &Checks{Deny: []string{"/w/secret"}, Hooks: Hooks{
		Written: func(p string) bool { return p == "/w/app" },
		Protection: func(p string) (string, string) {
			if p == "/home/u/.ssh" {
				return "protect-credentials", "ProtectCredentials"
			}
			return "", ""
		},
	}}
	cases := []struct {
		name           string
		f              viewcheck.Finding
		setting, value string
		detail         string
	}{
		{"denied", viewcheck.Finding{Path: "/w/secret/x", Problem: viewcheck.Protected}, "", "", "; denied by the filesystem policy (Config.Deny)"},
		{"protected", viewcheck.Finding{Path: "/home/u/.ssh", Problem: viewcheck.Protected}, "grants.read", "/home/u/.ssh",
			"; --protect-credentials=false (Config.Security.ProtectCredentials) lifts the protection as a whole"},
		{"no exec, written", viewcheck.Finding{Path: "/w/app", Problem: viewcheck.NoExec, Need: viewcheck.NeedExec}, "build", "", ""},
		{"no exec, elsewhere", viewcheck.Finding{Path: "/opt/x", Problem: viewcheck.NoExec, Need: viewcheck.NeedExec}, "grants.mode", "/opt/x=rx", ""},
		{"no exec, written to", viewcheck.Finding{Path: "/opt/x", Problem: viewcheck.NoExec, Need: viewcheck.NeedWrite}, "grants.mode", "/opt/x=rwx", ""},
		{"read-only", viewcheck.Finding{Path: "/opt/x", Problem: viewcheck.ReadOnly}, "grants.write", "/opt/x", ""},
		{"hidden, write and exec", viewcheck.Finding{Path: "/opt/x", Problem: viewcheck.Hidden, Need: viewcheck.NeedWrite | viewcheck.NeedExec}, "grants.mode", "/opt/x=rwx", ""},
		{"hidden, read", viewcheck.Finding{Path: "/opt/x", Problem: viewcheck.Hidden}, "grants.read", "/opt/x", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := c.allowFor(tc.f, refusal.Refusal{Kind: "path", Subject: tc.f.Path})
			if r.Setting != tc.setting || r.Value != tc.value || r.Detail != tc.detail {
				t.Errorf("setting %q value %q detail %q, want %q %q %q", r.Setting, r.Value, r.Detail, tc.setting, tc.value, tc.detail)
			}
			if (r.Setting == "") != (r.Allow == "") {
				t.Errorf("Allow %q does not follow Setting %q", r.Allow, r.Setting)
			}
		})
	}
}

// A check with neither a chosen variable nor a path on the command line
// builds no view and records nothing.
func TestCheckNothingToCheck(t *testing.T) {
	var rs refusal.List
	c := &Checks{Hooks: Hooks{Refused: &rs, View: func() viewcheck.View { t.Fatal("view built"); return viewcheck.View{} }}}
	c.Check(func() []string { return nil }, nil, []string{"true"})
	if got := rs.Snapshot(); got != nil {
		t.Fatalf("refusals %v, want none", got)
	}
}
