package cli

import (
	"bytes"
	"strings"
	"testing"
)

// The host trace is off without MOAT_TRACE=1 and prints one line of marks
// with it; a nil trace records and prints nothing.
func TestHostTrace(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want bool
	}{{"", false}, {"0", false}, {"1", true}} {
		t.Setenv("MOAT_TRACE", tc.env)
		tr := newHostTrace()
		tr.mark("config")
		tr.mark("new")
		var b bytes.Buffer
		tr.print(&b)
		got := b.String()
		if !tc.want {
			if tr != nil || got != "" {
				t.Errorf("MOAT_TRACE=%q: trace %v printed %q", tc.env, tr, got)
			}
			continue
		}
		if !strings.HasPrefix(got, "moat: trace: host: config ") || !strings.Contains(got, ", new ") || !strings.Contains(got, "; total ") || strings.Count(got, "\n") != 1 {
			t.Errorf("MOAT_TRACE=1 printed %q", got)
		}
	}
}
