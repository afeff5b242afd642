package linux

import (
	"slices"
	"strings"
	"testing"
)

// TestKeepPrivateTempWritable: a carve under the private /tmp that lies
// in no bind is dropped (the host's shared temp is hidden already), one
// in a read-only bind is dropped with a gap for a seal, one in a writable
// bind is kept with a gap; carves elsewhere are untouched.
func TestKeepPrivateTempWritable(t *testing.T) {
	cases := []struct {
		name     string
		spec     helperSpec
		carve    carveRule
		kept     bool
		gap      string
		maskKept bool
	}{
		{"state root in the host's /tmp", helperSpec{WorkDir: "/w"}, carveRule{Path: "/tmp/moat-state-1001"}, false, "", false},
		{"sealed read-only cwd under /tmp", helperSpec{WorkDir: "/w", ReadOnly: []string{"/tmp/proj"}}, carveRule{Path: "/tmp/proj", Seal: true}, false, "sealed but lies in the private /tmp", true},
		{"missing read-only path in a read-only cwd", helperSpec{WorkDir: "/w", ReadOnly: []string{"/tmp/proj"}}, carveRule{Path: "/tmp/proj/a/b"}, false, "", true},
		{"a writable bind inside the carved path", helperSpec{WorkDir: "/w", ReadOnly: []string{"/tmp/proj"}, ReadWrite: []string{"/tmp/proj/out"}}, carveRule{Path: "/tmp/proj", Seal: true}, false, "sealed", true},
		{"carve in a writable cwd under /tmp", helperSpec{WorkDir: "/tmp/proj"}, carveRule{Path: "/tmp/proj/.git/hooks"}, true, "no entry can be created directly in /tmp", true},
		{"outside the private temp", helperSpec{WorkDir: "/w"}, carveRule{Path: "/home/u/.ssh"}, true, "", true},
		{"private /var/tmp", helperSpec{WorkDir: "/w"}, carveRule{Path: "/var/tmp/moat-state-1001"}, false, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.spec
			s.PrivateTmp = map[string]string{"/tmp": "/state/tmp", "/var/tmp": "/state/vartmp"}
			s.ReadWrite = append(s.ReadWrite, "/tmp", "/var/tmp")
			s.Carve = []carveRule{tc.carve}
			s.MaskFiles = []string{tc.carve.Path}
			e := &Engine{}
			e.keepPrivateTempWritable(&s)
			if got := len(s.Carve) == 1; got != tc.kept {
				t.Errorf("carve kept = %v, want %v", got, tc.kept)
			}
			if got := slices.Contains(s.MaskFiles, tc.carve.Path); got != tc.maskKept {
				t.Errorf("mask kept = %v, want %v", got, tc.maskKept)
			}
			gaps := strings.Join(e.gaps, "\n")
			if tc.gap == "" && gaps != "" || !strings.Contains(gaps, tc.gap) {
				t.Errorf("gaps %q, want %q", gaps, tc.gap)
			}
		})
	}
}
