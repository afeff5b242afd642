package buildmode

import (
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/refusal"
	"github.com/moat-sandbox/moat/internal/settings"
)

// The id the refusals name is the settings table's "build", which the
// root's refusal-site scan takes buildSetting to be.
func TestSettingKnown(t *testing.T) {
	if buildSetting != "build" {
		t.Fatalf("buildSetting = %q, want \"build\"", buildSetting)
	}
	if _, ok := settings.Lookup(buildSetting); !ok {
		t.Fatalf("%q is not in internal/settings' table", buildSetting)
	}
}

// The notes name build mode as the fix only where it is one.
func TestNotes(t *testing.T) {
	written := func(p string) bool { return strings.HasPrefix(p, "/w/") }
	cases := []struct {
		name string
		on   bool
		note func(m *Mode)
		want []string
	}{
		{"exec in the working directory", false, func(m *Mode) { m.NoteExecRefused("/w/app") },
			[]string{"exec: /w/app: " + wxDetail + " (--build, Config.Build)"}},
		{"exec elsewhere written", false, func(m *Mode) { m.NoteWrittenExec("/t/app") },
			[]string{"exec: /t/app: " + wxDetail + "; build mode makes only the working directory and Go's GOTMPDIR executable (--build, Config.Build)"}},
		{"exec not written", false, func(m *Mode) { m.NoteExecRefused("/usr/bin/x") }, nil},
		{"exit 126", false, func(m *Mode) { m.NoteExit("./app", 126, false) },
			[]string{"exec: app exited 126: a program it ran could not be executed; if that was a file written in the sandbox (./app, a venv's or node_modules/.bin's script), " + wxDetail + " (--build, Config.Build)"}},
		{"exit 126, supervised", false, func(m *Mode) { m.NoteExit("./app", 126, true) }, nil},
		{"exit 126, build mode", true, func(m *Mode) { m.NoteExit("./app", 126, false) }, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var rs refusal.List
			m := &Mode{On: tc.on, WorkDir: "/w", Written: written, Refused: &rs}
			tc.note(m)
			var got []string
			for _, r := range rs.Snapshot() {
				got = append(got, r.String())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}
