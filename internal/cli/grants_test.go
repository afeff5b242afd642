package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

func TestGrantFlags(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	dir := filepath.Join(base, "dir")
	work := filepath.Join(base, "work")
	secret := filepath.Join(base, "secret")
	for _, d := range []string{dir, work, secret} {
		os.Mkdir(d, 0o755)
	}
	os.Symlink(secret, filepath.Join(work, "planted"))
	os.Symlink(dir, filepath.Join(base, "alias"))

	cases := []struct {
		name string
		args []string
		want map[string]string // path -> mode
		err  string
	}{
		{"grant modes", []string{"--grant", dir + "=rx"}, map[string]string{dir: "rx"}, ""},
		{"shorthands union", []string{"--writable", dir, "--executable", dir}, map[string]string{dir: "rwx"}, ""},
		{"readable", []string{"--readable", dir}, map[string]string{dir: "r"}, ""},
		{"link in the user's spelling", []string{"--readable", filepath.Join(base, "alias")}, map[string]string{dir: "r"}, ""},
		{"planted link in the workdir", []string{"--workdir", work, "--readable", filepath.Join(work, "planted")}, nil, "symbolic link"},
		{"bad mode", []string{"--grant", dir + "=w"}, nil, `--grant "` + dir + `=w": access "w": missing r; write it as rw`},
		{"no mode", []string{"--grant", dir}, nil, "want PATH=MODE"},
		{"missing path", []string{"--readable", filepath.Join(base, "nope")}, nil, "no such file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := parseSandboxFlags(t, tc.args)
			if tc.err != "" {
				code, _ := exitCode(err)
				if err == nil || !strings.Contains(err.Error(), tc.err) || code != 2 {
					t.Fatalf("err = %v (exit %d), want a usage error with %q", err, code, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]moat.Access{}
			for _, g := range cfg.Grants {
				got[g.Path] |= g.Access
			}
			for p, m := range tc.want {
				if got[p].String() != m {
					t.Fatalf("grants %v, want %s=%s", got, p, m)
				}
			}
		})
	}
}

// FuzzGrantFlag: --grant never panics, and what it accepts has a path and a
// mode that prints back to itself.
func FuzzGrantFlag(f *testing.F) {
	for _, s := range []string{"/a=r", "/a=rwx", "a=b=rw", "=r", "/a=", "/a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var g grantList
		if err := g.Set(s); err != nil {
			return
		}
		r := g[0]
		if r.Path == "" || !strings.HasSuffix(s, "="+strings.TrimPrefix(s, r.Path+"=")) {
			t.Fatalf("Set(%q) = %+v", s, r)
		}
		var back moat.Access
		if err := back.UnmarshalText([]byte(r.Access.String())); err != nil || back != r.Access {
			t.Fatalf("Set(%q): mode %v does not round-trip", s, r.Access)
		}
	})
}
