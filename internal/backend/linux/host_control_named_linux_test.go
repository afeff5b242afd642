package linux

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// What an existing repository's config and hooks name inside the place is
// bound read-only: husky's hooks directory with its parent, a filter's
// program, a venv whose python a hook execs (whole), a hook link's target.
func TestControlNamedPaths(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", "/nonexistent")
	t.Setenv("GIT_CONFIG_SYSTEM", "/nonexistent")
	tests := []struct {
		name    string
		config  string
		files   map[string]string // relative to the place; "->X" makes a link
		wantRO  []string
		created []string
	}{
		{"husky", "[core]\n\thooksPath = .husky/_\n", map[string]string{".husky/_/h": "x", ".husky/pre-commit": "x"},
			[]string{".husky"}, nil},
		{"husky before install", "[core]\n\thooksPath = .husky/_\n", nil,
			[]string{".husky"}, []string{".husky", ".husky/" + placeholderMarker}},
		{"plain hooksPath", "[core]\n\thooksPath = githooks\n", map[string]string{"githooks/pre-commit": "x"},
			[]string{"githooks"}, nil},
		{"hooksPath at the top", "[core]\n\thooksPath = .\n", map[string]string{"pre-commit": "x", "main.go": "x"},
			[]string{"pre-commit"}, nil},
		{"filter program", "[filter \"x\"]\n\tclean = bin/tool -q\n", map[string]string{"bin/tool": "x"},
			[]string{"bin/tool"}, nil},
		{"filter program in a venv", "[filter \"nb\"]\n\tclean = \"$W/.venv/bin/python\" -m nbstripout\n",
			map[string]string{".venv/pyvenv.cfg": "home = /usr/bin", ".venv/bin/python": "->/usr/bin/python3"},
			[]string{".venv"}, nil},
		{"hook link", "", map[string]string{"scripts/pre-commit.sh": "x", ".git/hooks/pre-commit": "->../../scripts/pre-commit.sh"},
			[]string{"scripts/pre-commit.sh"}, nil},
		{"pre-commit hook", "", map[string]string{".venv/pyvenv.cfg": "h", ".venv/bin/python": "x",
			".git/hooks/pre-commit": "#!/usr/bin/env bash\nINSTALL_PYTHON='$W/.venv/bin/python'\n"},
			[]string{".venv"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := t.TempDir()
			os.MkdirAll(filepath.Join(w, ".git/hooks"), 0o755)
			os.WriteFile(filepath.Join(w, ".git/HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
			os.WriteFile(filepath.Join(w, ".git/config"), []byte(replaceW(tt.config, w)), 0o644)
			for rel, c := range tt.files {
				p := filepath.Join(w, rel)
				os.MkdirAll(filepath.Dir(p), 0o755)
				if l, ok := cutLink(c); ok {
					if err := os.Symlink(l, p); err != nil {
						t.Fatal(err)
					}
					continue
				}
				os.WriteFile(p, []byte(replaceW(c, w)), 0o755)
			}
			cp, err := planControlPaths([]string{w})
			if err != nil {
				t.Fatal(err)
			}
			defer cp.cleanup()
			for _, rel := range tt.wantRO {
				if !slices.Contains(cp.readOnly, filepath.Join(w, rel)) {
					t.Errorf("%s not bound read-only: %q", rel, cp.readOnly)
				}
			}
			if slices.Contains(cp.readOnly, w) || slices.Contains(cp.readOnly, filepath.Join(w, "main.go")) {
				t.Errorf("too much bound read-only: %q", cp.readOnly)
			}
			var made []string
			for _, p := range cp.created {
				if rel, _ := filepath.Rel(w, p); rel != ".git/hooks" && rel != ".git/config" && rel != ".git/hooks/"+placeholderMarker {
					made = append(made, rel)
				}
			}
			if !slices.Equal(made, tt.created) {
				t.Errorf("placeholders %q, want %q", made, tt.created)
			}
			cp.cleanup()
			for _, rel := range tt.created {
				if exists(filepath.Join(w, rel)) {
					t.Errorf("placeholder %s left after cleanup", rel)
				}
			}
		})
	}
}

func replaceW(s, w string) string {
	out := []byte{}
	for i := 0; i < len(s); i++ {
		if i+1 < len(s) && s[i] == '$' && s[i+1] == 'W' {
			out = append(out, w...)
			i++
			continue
		}
		out = append(out, s[i])
	}
	return string(out)
}

func cutLink(c string) (string, bool) {
	if len(c) > 2 && c[:2] == "->" {
		return c[2:], true
	}
	return "", false
}
