package cli

import (
	"strings"
	"testing"
)

// moat quarantine's usage errors exit 2 with one line naming what was
// wrong, and an empty quarantine lists as such.
func TestQuarantineUsage(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"quarantine"}, 2, "missing subcommand"},
		{[]string{"quarantine", "list", "x"}, 2, "unexpected argument"},
		{[]string{"quarantine", "show"}, 2, "want one ENTRY"},
		{[]string{"quarantine", "show", "../../etc"}, 2, "not an entry of the quarantine"},
		{[]string{"quarantine", "show", "0123456789ab"}, 2, "entry 0123456789ab"},
		{[]string{"quarantine", "restore", "0123456789ab"}, 2, "want ENTRY and each PATH"},
		{[]string{"quarantine", "prune", "--max-size", "lots"}, 2, "--max-size"},
		{[]string{"quarantine", "prune", "--older-than", "-1h"}, 2, "--older-than"},
		{[]string{"quarantine", "list"}, 0, ""},
		{[]string{"quarantine", "prune"}, 0, ""},
	}
	for _, tt := range tests {
		code, out, errOut := executeCaptured(t, tt.args...)
		if code != tt.code || !strings.Contains(errOut, tt.want) || tt.code == 2 && strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tt.args, code, errOut, tt.code, tt.want)
		}
		if len(tt.args) > 1 && tt.args[1] == "list" && code == 0 && !strings.Contains(out, "is empty") {
			t.Errorf("empty list printed %q", out)
		}
	}
}
