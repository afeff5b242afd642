package cli

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/moat-sandbox/moat/internal/settings"
)

// Every setting a refusal can name is a flag of moat run (and of python
// and shell, which share its flags), with what it needs: the table and the
// command line cannot drift apart.
func TestSettingsAreRunFlags(t *testing.T) {
	for name, fs := range map[string]*pflag.FlagSet{
		"run":    newRunCmd(stdio{}).Flags(),
		"python": newPythonCmd(stdio{}).Flags(),
		"shell":  newShellCmd(stdio{}).Flags(),
	} {
		for _, s := range settings.All() {
			for _, arg := range append(append([]string(nil), s.Needs...), s.Flag) {
				if flag, ok := strings.CutPrefix(arg, "--"); ok && fs.Lookup(flag) == nil {
					t.Errorf("%s: setting %s names %s, which is not a flag", name, s.ID, arg)
				}
			}
		}
	}
}

// --report-json is a flag of the commands that run something in a
// sandbox, and of no other.
func TestReportJSONFlagWhere(t *testing.T) {
	root := newRoot(stdio{})
	want := map[string]bool{"run": true, "exec": true, "python": true, "shell": true}
	seen := 0
	for _, c := range root.Commands() {
		has := c.Flags().Lookup("report-json") != nil
		if has != want[c.Name()] {
			t.Errorf("moat %s: --report-json %v, want %v", c.Name(), has, want[c.Name()])
		}
		if has {
			seen++
		}
	}
	if seen != len(want) {
		t.Errorf("--report-json on %d commands, want %d", seen, len(want))
	}
}
