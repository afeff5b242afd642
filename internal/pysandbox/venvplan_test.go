package pysandbox

import (
	"reflect"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/venv"
)

// Plan is pure: from a synthetic host it grants the venv read and execute,
// site-packages and bin/ write too only with AllowPipInstall, and refuses
// a venv the sandbox writes.
func TestPlan(t *testing.T) {
	env := &venv.Env{Path: "/v", Prefix: "/home/u/.pyenv/3.12", SitePackages: []string{"/v/lib/python3.12/site-packages"}}
	for _, tc := range []struct {
		name string
		h    Host
		s    Settings
		want []Grant
		err  string
	}{
		{"no venv", Host{}, Settings{}, nil, ""},
		{"read-only", Host{Env: env}, Settings{}, []Grant{{Path: "/v"}}, ""},
		{"python prefix", Host{Env: env, PythonPrefix: true}, Settings{}, []Grant{{Path: "/v"}, {Path: "/home/u/.pyenv/3.12"}}, ""},
		{"pip install", Host{Env: env}, Settings{AllowPipInstall: true, Permissive: true, WritableGrants: []string{"/"}},
			[]Grant{{Path: "/v"}, {Path: "/v/bin", Write: true}, {Path: "/v/lib/python3.12/site-packages", Write: true}}, ""},
		{"in the working directory", Host{Env: env, WorkDir: "/"}, Settings{AllowPipInstall: true}, nil, "inside the working directory"},
		{"permissive", Host{Env: env}, Settings{Permissive: true}, nil, "permissive level"},
		{"under a writable grant", Host{Env: env}, Settings{WritableGrants: []string{"/"}}, nil, `writable grant "/"`},
		{"over a writable grant", Host{Env: env}, Settings{WritableGrants: []string{"/v/lib"}}, nil, `writable grant "/v/lib"`},
		{"in the kept home", Host{Env: env, Home: "/"}, Settings{}, nil, "kept home"},
	} {
		got, err := Plan(tc.h, tc.s)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}

// The IPC shims come before the venv's bin/, which comes before the rest
// of PATH, each once.
func TestExec(t *testing.T) {
	for _, tc := range []struct {
		venv, shims, path string
		mpl               bool
		name              string
		env               []string
	}{
		{"", "/s", "/usr/bin", false, "python3", []string{MPLBackend}},
		{"", "", "", true, "python3", []string{}},
		{"/v", "", "/usr/bin:/v/bin", true, "/v/bin/python", []string{"VIRTUAL_ENV=/v", "PATH=/v/bin:/usr/bin"}},
		{"/v", "/s", "/s:/usr/bin", false, "/v/bin/python", []string{MPLBackend, "VIRTUAL_ENV=/v", "PATH=/s:/v/bin:/usr/bin"}},
	} {
		name, env := Exec(tc.venv, tc.shims, tc.path, tc.mpl)
		if name != tc.name || !reflect.DeepEqual(env, tc.env) {
			t.Errorf("Exec(%q, %q, %q, %v) = %q, %q; want %q, %q", tc.venv, tc.shims, tc.path, tc.mpl, name, env, tc.name, tc.env)
		}
	}
}
