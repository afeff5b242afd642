package fspattern

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// mkTree creates entries under base: "d/" a directory, "f" a file,
// "l -> t" a symbolic link to t.
func mkTree(t testing.TB, base string, entries ...string) {
	t.Helper()
	for _, e := range entries {
		if name, target, ok := strings.Cut(e, " -> "); ok {
			p := filepath.Join(base, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		p := filepath.Join(base, e)
		if strings.HasSuffix(e, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// plan is a Result with paths written relative: "C/..." under the cwd,
// "H/..." under the home, "X/..." under the outside directory.
type plan struct {
	RootWritable, Covered                    bool
	Deny, Writable, Readable, ReadOnly, Seal []string
}

func TestMaterialize(t *testing.T) {
	cases := []struct {
		name       string
		cwd, home  []string // trees
		ext        []string
		deny, writ []string
		frag       map[string]string // fragment files of the cwd
		want       plan
		err        string
	}{
		{
			name: "ordered negation, later lines win",
			cwd:  []string{".env", ".env.example", ".env.local", "a", "b"},
			deny: []string{".env*", "!.env.example", "!a", "a", "b", "!b"},
			want: plan{Deny: []string{"C/.env", "C/.env.local", "C/a"}, Seal: []string{"C"}},
		},
		{
			name: "nested env pattern, cwd-relative",
			cwd:  []string{".env", "packages/api/.env.local", "packages/api/main.go", ".env.example"},
			deny: []string{"**/.env*", "!.env.example"},
			want: plan{Deny: []string{"C/.env", "C/packages/api/.env.local"}, Seal: []string{"C", "C/packages", "C/packages/api"}},
		},
		{
			name: "fragments come after the JSON lines",
			cwd:  []string{"secret.txt", "write.txt"},
			deny: []string{"secret.txt"},
			frag: map[string]string{".moat-deny": "!secret.txt\n", ".heimdall-write": "write.txt\n"},
			want: plan{Writable: []string{"C/write.txt"}, Seal: []string{"C"}},
		},
		{
			name: "moat's fragment comes after heimdall's",
			cwd:  []string{"secret.txt"},
			frag: map[string]string{".heimdall-deny": "!secret.txt\n", ".moat-deny": "secret.txt\n"},
			want: plan{Deny: []string{"C/secret.txt"}, Seal: []string{"C"}},
		},
		{
			name: "an unreadable fragment is an error",
			cwd:  []string{".heimdall-deny/"},
			err:  "invalid filesystem fragment ",
		},
		{
			name: "an invalid fragment line names the file and line",
			frag: map[string]string{".moat-deny": "ok\n\nbad[\n"},
			err:  ".moat-deny: line 3: invalid filesystem pattern \"bad[\"",
		},
		{
			name: "a fragment may not make a path outside the cwd writable",
			frag: map[string]string{".moat-write": "~/.ssh\n"},
			err:  "only the policy itself may name such a path",
		},
		{
			name: "broad writable protects the control paths",
			cwd:  []string{".git/", ".heimdall-local", ".moat-cache/", "regular.txt"},
			writ: []string{"."},
			want: plan{RootWritable: true, ReadOnly: []string{"C/.agents", "C/.git", "C/.heimdall-deny", "C/.heimdall-local", "C/.heimdall-write", "C/.moat-cache", "C/.moat-deny", "C/.moat-write", "C/.pi"}},
		},
		{
			name: "** is broad too, and writes below a protected entry stay refused",
			cwd:  []string{".git/hooks/pre-commit", "src/a.go"},
			writ: []string{"**"},
			want: plan{RootWritable: true, ReadOnly: []string{"C/.agents", "C/.git", "C/.heimdall-deny", "C/.heimdall-write", "C/.moat-deny", "C/.moat-write", "C/.pi"}},
		},
		{
			name: "a control path in a read-only cwd keeps writable patterns out",
			cwd:  []string{".git/hooks/", "src/hooks/"},
			writ: []string{"**/hooks"},
			want: plan{Writable: []string{"C/src/hooks"}},
		},
		{
			name: "an explicitly writable control path in a read-only cwd is writable",
			cwd:  []string{".git/"},
			writ: []string{".git"},
			want: plan{Writable: []string{"C/.git"}},
		},
		{
			name: "a denied control path is denied, not read-only",
			cwd:  []string{".git/"},
			writ: []string{"."},
			deny: []string{".git"},
			want: plan{RootWritable: true, Deny: []string{"C/.git"}, ReadOnly: []string{"C/.agents", "C/.heimdall-deny", "C/.heimdall-write", "C/.moat-deny", "C/.moat-write", "C/.pi"}},
		},
		{
			name: "a writable ancestor makes the cwd writable and unprotected",
			cwd:  []string{".git/", "x"},
			writ: []string{"P"},
			want: plan{RootWritable: true, Covered: true, Writable: []string{"P"}},
		},
		{
			name: "a deny between a writable ancestor and the cwd keeps it uncovered",
			cwd:  []string{".git/"},
			writ: []string{"B"},
			deny: []string{"P"},
			want: plan{Writable: []string{"B"}, Deny: []string{"P"}},
		},
		{
			name: "deny wins at equal specificity",
			cwd:  []string{"x/"},
			deny: []string{"x"},
			writ: []string{"x"},
			want: plan{Deny: []string{"C/x"}, Seal: []string{"C"}},
		},
		{
			name: "external absolute writable and deny targets",
			ext:  []string{"w/", "d"},
			deny: []string{"X/d"},
			writ: []string{"X/w"},
			want: plan{Deny: []string{"X/d"}, Writable: []string{"X/w"}},
		},
		{
			name: "a later absolute negation removes a deny",
			ext:  []string{"d"},
			deny: []string{"X/d", "!X/d"},
		},
		{
			name: "a later absolute negation suppresses a missing guard",
			ext:  []string{"w/"},
			deny: []string{"X/w/missing", "!X/w/missing"},
			writ: []string{"X/w"},
			want: plan{Writable: []string{"X/w"}},
		},
		{
			name: "an absolute deny negation does not override a writable",
			ext:  []string{"w/"},
			deny: []string{"!X/w"},
			writ: []string{"X/w"},
			want: plan{Writable: []string{"X/w"}},
		},
		{
			name: "a longer writable wins over a denied parent",
			ext:  []string{"t/debug/"},
			deny: []string{"X/t"},
			writ: []string{"X/t/debug"},
			want: plan{Deny: []string{"X/t"}, Writable: []string{"X/t/debug"}},
		},
		{
			name: "a longer deny wins over a writable parent",
			ext:  []string{"t/debug/"},
			deny: []string{"X/t/debug"},
			writ: []string{"X/t"},
			want: plan{Deny: []string{"X/t/debug"}, Writable: []string{"X/t"}},
		},
		{
			name: "the same inside the cwd",
			cwd:  []string{".config/nvim/init.vim", ".config/other", "t/debug/", "t/x"},
			deny: []string{".config", "t/debug"},
			writ: []string{".config/nvim", "t"},
			// .config matches at any depth: guarded at the top of each
			// writable target, and the read-only cwd is sealed.
			want: plan{Deny: []string{"C/.config", "C/.config/nvim/.config", "C/t/.config", "C/t/debug"}, Writable: []string{"C/.config/nvim", "C/t"}, Seal: []string{"C"}},
		},
		{
			name: "the same, anchored",
			cwd:  []string{".config/nvim/init.vim", ".config/other", "t/debug/", "t/x"},
			deny: []string{"./.config", "t/debug"},
			writ: []string{".config/nvim", "t"},
			want: plan{Deny: []string{"C/.config", "C/t/debug"}, Writable: []string{"C/.config/nvim", "C/t"}},
		},
		{
			name: "a glob deny of a path beats a literal writable ancestor",
			cwd:  []string{"work/.env", "work/a"},
			deny: []string{".env"},
			writ: []string{"work"},
			want: plan{Deny: []string{"C/work/.env"}, Writable: []string{"C/work"}, Seal: []string{"C"}},
		},
		{
			name: "~ is expanded, also after !",
			home: []string{".ssh/id", ".config/nvim/", ".config/keep"},
			deny: []string{"~/.ssh", "~/.config", "!~/.config/keep"},
			want: plan{Deny: []string{"H/.config", "H/.ssh"}, Readable: []string{"H/.config/keep"}},
		},
		{
			name: "a denied parent with a redundant denied child",
			home: []string{".config/nvim/"},
			deny: []string{"~/.config", "~/.config/nvim"},
			want: plan{Deny: []string{"H/.config"}},
		},
		{
			name: "missing literal writable and readable paths are skipped",
			home: []string{".config/"},
			deny: []string{"~/.config", "!~/.config/missing-restored"},
			writ: []string{"~/missing-writable", "missing-here"},
			want: plan{Deny: []string{"H/.config"}},
		},
		{
			name: "an indeterminate restored path fails",
			ext:  []string{"d/", "d/dl -> nowhere"},
			deny: []string{"X/d", "!X/d/dl/x"},
			err:  "cannot tell whether it exists",
		},
		{
			name: "missing denies are guarded under an existing writable directory",
			cwd:  []string{"work/", "ro/"},
			deny: []string{"work/blocked", "ro/blocked"},
			writ: []string{"work"},
			want: plan{Deny: []string{"C/work/blocked"}, Writable: []string{"C/work"}, Seal: []string{"C/ro"}},
		},
		{
			name: "a missing external deny outside a writable directory seals its nearest existing ancestor",
			home: []string{"x"},
			deny: []string{"~/.vim/plugin"},
			want: plan{Seal: []string{"H"}},
		},
		{
			name: "a missing deny name is guarded at the top of a writable cwd",
			cwd:  []string{"sub/"},
			deny: []string{"missing"},
			writ: []string{"."},
			want: plan{RootWritable: true, Deny: []string{"C/missing"}, ReadOnly: []string{"C/.agents", "C/.git", "C/.heimdall-deny", "C/.heimdall-write", "C/.moat-deny", "C/.moat-write", "C/.pi"}},
		},
		{
			name: "a missing deny in a read-only cwd seals the cwd",
			deny: []string{"missing"},
			want: plan{Seal: []string{"C"}},
		},
		{
			name: "an absolute path under the cwd is concrete",
			cwd:  []string{"sub/x", "other/x"},
			deny: []string{"C/sub/x"},
			want: plan{Deny: []string{"C/sub/x"}, Seal: nil},
		},
		{
			name: "a literal prefix seals only its directory",
			cwd:  []string{"secrets/a.key", "secrets/b.txt", "src/deep/x.key"},
			deny: []string{"secrets/*.key"},
			want: plan{Deny: []string{"C/secrets/a.key"}, Seal: []string{"C/secrets"}},
		},
		{
			name: "a directory-only pattern skips files",
			cwd:  []string{"build/", "sub/build"},
			deny: []string{"build/"},
			want: plan{Deny: []string{"C/build"}, Seal: []string{"C", "C/sub"}},
		},
		{
			name: "a denied link denies its target and itself",
			cwd:  []string{"real/secret", "alias.env -> real"},
			deny: []string{"*.env"},
			want: plan{Deny: []string{"C/alias.env", "C/real"}, Seal: []string{"C", "C/real"}},
		},
		{
			name: "a writable pattern never makes a link's target writable",
			cwd:  []string{"out -> /"},
			writ: []string{"out"},
		},
		{
			name: "a negated writable keeps a path read-only inside a writable directory",
			cwd:  []string{"work/keep", "work/a"},
			writ: []string{"work", "!work/keep"},
			want: plan{Writable: []string{"C/work"}, ReadOnly: []string{"C/work/keep"}},
		},
		{
			name: "writable glob matches below a writable target are redundant",
			cwd:  []string{"a/b.txt", "a/c/d.txt", "e.txt"},
			writ: []string{"a", "*.txt"},
			want: plan{Writable: []string{"C/a", "C/e.txt"}},
		},
		{
			name: "deny of the cwd itself",
			cwd:  []string{"x"},
			deny: []string{"."},
			want: plan{Deny: []string{"C"}},
		},
		{
			name: ".pi/heimdall.json is never read",
			cwd:  []string{".pi/heimdall.json", "secret.txt"},
			frag: map[string]string{".pi/heimdall.json": `{"filesystem":{"deny":["secret.txt"]}}`},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := t.TempDir()
			base, _ = filepath.EvalSymlinks(base)
			parent := filepath.Join(base, "P")
			cwd := filepath.Join(parent, "cwd")
			home := filepath.Join(base, "home")
			ext := filepath.Join(base, "ext")
			for _, d := range []string{cwd, home, ext} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			mkTree(t, cwd, c.cwd...)
			mkTree(t, home, c.home...)
			mkTree(t, ext, c.ext...)
			for name, body := range c.frag {
				if err := os.WriteFile(filepath.Join(cwd, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			sub := func(ps []string) []string {
				var out []string
				for _, p := range ps {
					switch {
					case p == "P":
						p = parent
					case p == "B":
						p = base
					case strings.HasPrefix(p, "!X/"):
						p = "!" + filepath.Join(ext, p[3:])
					case strings.HasPrefix(p, "X/"):
						p = filepath.Join(ext, p[2:])
					case strings.HasPrefix(p, "C/"):
						p = filepath.Join(cwd, p[2:])
					}
					out = append(out, p)
				}
				return out
			}
			res, err := Materialize(Input{Root: cwd, Home: home, Deny: sub(c.deny), Writable: sub(c.writ)})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rel := func(ps []string) []string {
				var out []string
				for _, p := range ps {
					switch {
					case p == base:
						p = "B"
					case p == parent:
						p = "P"
					case p == cwd:
						p = "C"
					case strings.HasPrefix(p, cwd+"/"):
						p = "C/" + p[len(cwd)+1:]
					case p == home:
						p = "H"
					case strings.HasPrefix(p, home+"/"):
						p = "H/" + p[len(home)+1:]
					case strings.HasPrefix(p, ext+"/"):
						p = "X/" + p[len(ext)+1:]
					}
					out = append(out, p)
				}
				return out
			}
			got := plan{RootWritable: res.RootWritable, Covered: res.CoveredByAncestor, Deny: rel(res.Deny), Writable: rel(res.Writable), Readable: rel(res.Readable), ReadOnly: rel(res.ReadOnly), Seal: rel(res.Seal)}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestPathState(t *testing.T) {
	base := t.TempDir()
	mkTree(t, base, "file", "dir/", "dangling -> nowhere", "linkdir -> dir", "dir/inner")
	cases := []struct {
		path  string
		want  State
		indet bool
	}{
		{"file", Existing, false},
		{"dir", Existing, false},
		{"missing", Missing, false},
		{"missing/below", Missing, false},
		{"file/below", Missing, false},
		{"dangling", Existing, false}, // a dangling final link exists
		{"dangling/below", Missing, true},
		{"linkdir/inner", Existing, false},
		{"linkdir/none", Missing, false},
	}
	for _, c := range cases {
		got, err := PathState(filepath.Join(base, c.path))
		var ie *IndeterminateError
		if c.indet {
			if !errors.As(err, &ie) {
				t.Errorf("%s: err = %v, want indeterminate", c.path, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %v, %v; want %v", c.path, got, err, c.want)
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		if st, err := PathState(home); err != nil || st != Existing {
			t.Errorf("home %s: %v, %v", home, st, err)
		}
	}
}

// TestMaterializeLinkedHome: a home spelled through a symbolic link gives
// real paths, for an existing deny, a guard and a seal alike.
func TestMaterializeLinkedHome(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	real := filepath.Join(base, "realhome")
	cwd := filepath.Join(base, "cwd")
	mkTree(t, base, "realhome/.ssh/id", "realhome/w/", "cwd/", "home -> realhome")
	home := filepath.Join(base, "home")
	res, err := Materialize(Input{Root: cwd, Home: home, Deny: []string{"~/.ssh", "~/w/.vim", "~/nodir/x"}, Writable: []string{"~/w"}})
	if err != nil {
		t.Fatal(err)
	}
	wantDeny := []string{filepath.Join(real, ".ssh"), filepath.Join(real, "w/.vim")}
	if !reflect.DeepEqual(res.Deny, wantDeny) || !reflect.DeepEqual(res.Seal, []string{real}) {
		t.Errorf("deny %q seal %q; want deny %q seal [%s]", res.Deny, res.Seal, wantDeny, real)
	}
}
