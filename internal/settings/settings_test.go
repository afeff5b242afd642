package settings

import (
	"regexp"
	"slices"
	"testing"
)

// Ids are dotted lowercase words, each used once; every setting names a
// flag and a Config field.
func TestTableWellFormed(t *testing.T) {
	idRE := regexp.MustCompile(`^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)*$`)
	flagRE := regexp.MustCompile(`^--[a-z][a-z0-9-]*$`)
	ids, flags := map[string]bool{}, map[string]bool{}
	for _, s := range All() {
		if !idRE.MatchString(s.ID) || ids[s.ID] {
			t.Errorf("id %q: malformed or repeated", s.ID)
		}
		if !flagRE.MatchString(s.Flag) || flags[s.Flag] {
			t.Errorf("%s: flag %q malformed or repeated", s.ID, s.Flag)
		}
		if s.Field == "" {
			t.Errorf("%s: no Config field", s.ID)
		}
		ids[s.ID], flags[s.Flag] = true, true
	}
	if len(ids) < 10 {
		t.Fatalf("only %d settings", len(ids))
	}
}

func TestAllow(t *testing.T) {
	cases := []struct {
		id, value, want string
		args            []string
	}{
		{"build", "", "--build, Config.Build", []string{"--build"}},
		{"network.allow-domain", "pypi.org", "--network allow-list --allow-domain pypi.org", []string{"--network", "allow-list", "--allow-domain", "pypi.org"}},
		{"network.allow-domain", "", "--network allow-list --allow-domain HOST, Config.Network", nil},
		{"network.allow-local", "10.1.2.3", "--allow-local 10.1.2.3", []string{"--allow-local", "10.1.2.3"}},
		{"sockets", "", "--allow-socket PATH, Config.Sockets", nil},
		{"limits.memory", "", "--memory SIZE, Limits.MemoryBytes", nil},
		{"limits.memory", "unlimited", "--memory unlimited, Limits.MemoryBytes -1", []string{"--memory", "unlimited"}},
		{"limits.timeout", "", "--timeout DURATION, Limits.Timeout", nil},
		{"protect.credentials", "false", "--protect-credentials=false", []string{"--protect-credentials=false"}},
		{"protect.credentials", "", "--protect-credentials=BOOL, SecurityConfig.ProtectCredentials", nil},
		{"grants.read", "/data/x", "--readable /data/x", []string{"--readable", "/data/x"}},
		{"no.such", "x", "", nil},
		{"", "", "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.id+"="+tc.value, func(t *testing.T) {
			if got := Allow(tc.id, tc.value); got != tc.want {
				t.Errorf("Allow = %q, want %q", got, tc.want)
			}
			s, _ := Lookup(tc.id)
			if got := s.Args(tc.value); !slices.Equal(got, tc.args) {
				t.Errorf("Args = %q, want %q", got, tc.args)
			}
		})
	}
}

// All returns a copy: changing it changes nothing of the table.
func TestAllIsACopy(t *testing.T) {
	a := All()
	a[0].ID = "changed"
	for i := range a {
		if a[i].Needs != nil {
			a[i].Needs[0] = "changed"
		}
	}
	for _, s := range All() {
		if s.ID == "changed" || slices.Contains(s.Needs, "changed") {
			t.Fatal("All shares the table")
		}
	}
}

func TestWords(t *testing.T) {
	for _, tc := range []struct{ id, words, field string }{
		{"home", "--home (Config.Home)", "Config.Home"},
		{"workdir.allow-home", "--allow-home-workdir (Config.AllowHomeWorkDir)", "Config.AllowHomeWorkDir"},
		{"no.such", "", ""},
	} {
		if got := Words(tc.id); got != tc.words {
			t.Errorf("Words(%q) = %q, want %q", tc.id, got, tc.words)
		}
		if got := Field(tc.id); got != tc.field {
			t.Errorf("Field(%q) = %q, want %q", tc.id, got, tc.field)
		}
	}
}
