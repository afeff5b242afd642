package policy

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

func TestApplyFilesystem(t *testing.T) {
	mk := func(t *testing.T, base string, files ...string) {
		for _, f := range files {
			p := filepath.Join(base, f)
			if strings.HasSuffix(f, "/") {
				if err := os.MkdirAll(p, 0o755); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	cases := []struct {
		name       string
		files      []string
		deny, writ []string
		grants     map[string]moat.Access // relative to base: "cwd", "home/..."
		denied     []string
		readOnly   []string
		seal       []string
		err        string
	}{
		{
			name:   "no patterns: the cwd is readable",
			grants: map[string]moat.Access{"cwd": moat.READ},
		},
		{
			name:   "writable targets and restores are grants; denies and seals fill their fields",
			files:  []string{"cwd/work/", "cwd/.env", "home/.config/keep", "home/.config/x"},
			deny:   []string{".env", "~/.config", "!~/.config/keep"},
			writ:   []string{"work"},
			grants: map[string]moat.Access{"cwd": moat.READ, "cwd/work": moat.READ | moat.WRITE, "home/.config/keep": moat.READ},
			denied: []string{"cwd/.env", "cwd/work/.env", "home/.config"},
			seal:   []string{"cwd"},
		},
		{
			name:     "a broad writable cwd is a read-write grant with its control paths read-only",
			files:    []string{"cwd/.git/"},
			writ:     []string{"."},
			grants:   map[string]moat.Access{"cwd": moat.READ | moat.WRITE},
			readOnly: []string{"cwd/.agents", "cwd/.git", "cwd/.heimdall-deny", "cwd/.heimdall-write", "cwd/.moat-deny", "cwd/.moat-write", "cwd/.pi"},
		},
		{
			name:  "a denied link to a granted path is refused",
			files: []string{"cwd/work/", "cwd/w.env -> work"},
			deny:  []string{"*.env"},
			writ:  []string{"work"},
			err:   "both denied (through a symbolic link) and granted",
		},
		{
			name: "a bad pattern",
			deny: []string{"[x"},
			err:  `invalid filesystem pattern "[x"`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			mk(t, base, "cwd/", "home/")
			for _, f := range c.files {
				if name, target, ok := strings.Cut(f, " -> "); ok {
					if err := os.Symlink(target, filepath.Join(base, name)); err != nil {
						t.Fatal(err)
					}
					continue
				}
				mk(t, base, f)
			}
			var cfg moat.Config
			err = ApplyFilesystem(&cfg, filepath.Join(base, "cwd"), filepath.Join(base, "home"), c.deny, c.writ)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			grants := map[string]moat.Access{}
			for _, g := range cfg.Grants {
				rel, _ := filepath.Rel(base, g.Path)
				grants[rel] = g.Access
			}
			rel := func(ps []string) []string {
				var out []string
				for _, p := range ps {
					r, _ := filepath.Rel(base, p)
					out = append(out, r)
				}
				return out
			}
			if !reflect.DeepEqual(grants, c.grants) {
				t.Errorf("grants %v, want %v", grants, c.grants)
			}
			if got := rel(cfg.Deny); !reflect.DeepEqual(got, c.denied) {
				t.Errorf("deny %q, want %q", got, c.denied)
			}
			if got := rel(cfg.ReadOnly); !reflect.DeepEqual(got, c.readOnly) {
				t.Errorf("read-only %q, want %q", got, c.readOnly)
			}
			if got := rel(cfg.Seal); !reflect.DeepEqual(got, c.seal) {
				t.Errorf("seal %q, want %q", got, c.seal)
			}
			// Where the backend enforces them, the fields pass Validate.
			if err := cfg.Validate(); err != nil && runtime.GOOS == "linux" {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}
