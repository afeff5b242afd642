package pysandbox

import "testing"

func TestSetsEnv(t *testing.T) {
	for _, tc := range []struct {
		passthrough, set []string
		want             bool
	}{
		{nil, nil, false}, {nil, []string{"MPLBACKEND=svg"}, true}, {[]string{"MPLBACKEND"}, nil, true}, {nil, []string{"MPLBACKENDX=1"}, false},
	} {
		if got := SetsEnv(tc.passthrough, tc.set, "MPLBACKEND"); got != tc.want {
			t.Errorf("SetsEnv(%q, %q) = %v", tc.passthrough, tc.set, got)
		}
	}
}
