package spec

import (
	"slices"
	"testing"
)

// WritablePlaces are the supplied working directory and the writable
// grants, in order; a working directory moat created is none.
func TestWritablePlaces(t *testing.T) {
	grants := []Grant{{Path: "/r"}, {Path: "/w", Write: true}, {Path: "/x", Exec: true}, {Path: "/wx", Write: true, Exec: true}}
	for _, tc := range []struct {
		name string
		p    Policy
		want []string
	}{
		{"zero", Policy{AutoWorkDir: true}, nil},
		{"supplied workdir", Policy{WorkDir: "/work"}, []string{"/work"}},
		{"auto workdir", Policy{WorkDir: "/work", AutoWorkDir: true, Grants: grants}, []string{"/w", "/wx"}},
		{"both", Policy{WorkDir: "/work", Grants: grants}, []string{"/work", "/w", "/wx"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.WritablePlaces(); !slices.Equal(got, tc.want) {
				t.Errorf("WritablePlaces() = %q, want %q", got, tc.want)
			}
		})
	}
}
