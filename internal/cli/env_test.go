package cli

import (
	"github.com/moat-sandbox/moat/policy"

	"reflect"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

func TestParseEnvFlag(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    envFlag
		wantErr string
	}{
		{name: "passthrough", in: "HOME", want: envFlag{Name: "HOME"}},
		{name: "set", in: "FOO=bar", want: envFlag{Name: "FOO", Value: "bar", Set: true}},
		{name: "set empty", in: "FOO=", want: envFlag{Name: "FOO", Set: true}},
		{name: "value with equals", in: "A=b=c", want: envFlag{Name: "A", Value: "b=c", Set: true}},
		{name: "value with spaces", in: "A= x y ", want: envFlag{Name: "A", Value: " x y ", Set: true}},
		{name: "underscore and digits", in: "_a1_B2", want: envFlag{Name: "_a1_B2"}},
		{name: "empty", in: "", wantErr: "want NAME"},
		{name: "empty name", in: "=x", wantErr: "want NAME"},
		{name: "leading digit", in: "1FOO=x", wantErr: "not a valid variable name"},
		{name: "dash", in: "MY-VAR", wantErr: "not a valid variable name"},
		{name: "space in name", in: "A B=c", wantErr: "not a valid variable name"},
		{name: "NUL in value", in: "A=\x00", wantErr: "NUL"},
		{name: "loader variable", in: "LD_PRELOAD=/tmp/x.so", wantErr: "LD_*"},
		{name: "loader passthrough", in: "LD_LIBRARY_PATH", wantErr: "LD_*"},
		{name: "darwin loader", in: "DYLD_INSERT_LIBRARIES=x", wantErr: "DYLD_*"},
		{name: "moat marker", in: "_MOAT_HELPER_ROLE=x", wantErr: "_MOAT_*"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseEnvFlag(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseEnvFlag(%q) = %+v, %v; want error containing %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("parseEnvFlag(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
			if got.String() != tt.in {
				t.Errorf("String() = %q, want %q", got.String(), tt.in)
			}
		})
	}
}

func TestEnvListEnv(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want moat.Env
	}{
		{name: "none", args: nil, want: moat.Env{}},
		{name: "mixed keeps order", args: []string{"B=1", "A", "C=3"}, want: moat.Env{Passthrough: []string{"A"}, Set: []string{"B=1", "C=3"}}},
		{name: "last set wins", args: []string{"A=1", "A=2"}, want: moat.Env{Set: []string{"A=2"}}},
		{name: "passthrough after set wins", args: []string{"A=1", "A"}, want: moat.Env{Passthrough: []string{"A"}}},
		{name: "set after passthrough wins", args: []string{"A", "A=1"}, want: moat.Env{Set: []string{"A=1"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l envList
			for _, a := range tt.args {
				if err := l.Set(a); err != nil {
					t.Fatalf("Set(%q): %v", a, err)
				}
			}
			if got := l.env(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("env() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func FuzzParseEnvFlag(f *testing.F) {
	for _, s := range []string{"HOME", "FOO=bar", "A=b=c", "", "=", "=x", "1A", "LD_PRELOAD=x", "A=\x00", "_=", "Ä=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := parseEnvFlag(s)
		if err != nil {
			return
		}
		if policy.CheckEnvVar(policy.EnvVar{Name: e.Name, Value: e.Value, Set: e.Set}) != nil {
			t.Fatalf("parseEnvFlag(%q) accepted %q, which the config file refuses", s, e.Name)
		}
		if e.Set != strings.Contains(s, "=") {
			t.Fatalf("parseEnvFlag(%q).Set = %v", s, e.Set)
		}
		if e.String() != s {
			t.Fatalf("parseEnvFlag(%q).String() = %q", s, e.String())
		}
		again, err := parseEnvFlag(e.String())
		if err != nil || again != e {
			t.Fatalf("round trip of %q: %+v, %v", s, again, err)
		}
		// What the CLI accepts, moat's own validation must accept too.
		var l envList
		if err := l.Set(s); err != nil {
			t.Fatalf("envList.Set(%q): %v", s, err)
		}
		env := l.env()
		for _, kv := range env.Set {
			if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
				t.Fatalf("Env.Set entry %q is not NAME=VALUE", kv)
			}
		}
		for _, k := range env.Passthrough {
			if k == "" || strings.Contains(k, "=") {
				t.Fatalf("Env.Passthrough entry %q is not a name", k)
			}
		}
	})
}
