package fspattern

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/paths"
)

// TestCompileEscapedDotComponents: a "." or ".." component is refused
// however it is spelled, since the literal, unescaped and joined to the
// working directory, would name the directory itself or climb out of it.
// The controls are names that only look like dots.
func TestCompileEscapedDotComponents(t *testing.T) {
	o := Options{Root: "/w/proj", Home: "/h"}
	for _, tt := range []struct {
		pat string
		ok  bool
	}{
		{`\.\./outside`, false},
		{`.\./outside`, false},
		{`\../outside`, false},
		{`d/\.\./\.\./outside`, false},
		{`!\.\./outside`, false},
		{`\./x`, false},
		{`x/\.`, false},
		{`x/\./`, false},
		{`/w/proj/\.\./outside`, false},
		{`/w/proj/sub/\.\./\.\./x`, false},
		{`x//y`, false},
		{`x/./y`, false},
		{"x/\\\x00", false},
		{`\.\.\./x`, true},       // "..." is a name
		{`\.env`, true},          // ".env"
		{"\u2024\u2024/x", true}, // one dot leaders, not dots
		{"\uff0e\uff0e/x", true}, // fullwidth full stops, not dots
		{`[.][.]/x`, true},       // a glob: the walk never sees ".."
		{`x/`, true},
	} {
		r, err := Compile(tt.pat, o)
		if (err == nil) != tt.ok {
			t.Errorf("Compile(%q) = %v, want ok %v", tt.pat, err, tt.ok)
			continue
		}
		if err == nil {
			assertInRoot(t, tt.pat, r, o.Root)
		}
	}
}

// assertInRoot checks the invariant: a rule rooted at root names, through
// every literal it holds, only paths under root.
func assertInRoot(t *testing.T, pat string, r *Rule, root string) {
	t.Helper()
	if r.Abs != "" || r.Self {
		return
	}
	for i := range r.segs {
		s := &r.segs[i]
		if s.dstar || s.glob != nil {
			continue
		}
		if s.lit == "" || s.lit == "." || s.lit == ".." || strings.ContainsAny(s.lit, "/\x00") {
			t.Fatalf("Compile(%q): literal component %q", pat, s.lit)
		}
		if p := filepath.Join(root, joinLits(r.segs[i:i+1])); !strings.HasPrefix(p, root+"/") {
			t.Fatalf("Compile(%q): component %q leaves %s", pat, s.lit, root)
		}
	}
	if rel := r.RelPath(); rel != "" {
		if p := filepath.Join(root, filepath.FromSlash(rel)); !strings.HasPrefix(p, root+"/") || filepath.Clean(root+"/"+rel) != p {
			t.Fatalf("Compile(%q): RelPath %q leaves %s", pat, rel, root)
		}
	}
}

// FuzzCompileStaysInRoot: no compiled pattern that is rooted at the
// working directory names a path outside it.
func FuzzCompileStaysInRoot(f *testing.F) {
	for _, s := range []string{`\.\./x`, `.\./x`, `\../x`, `a/\.\./\.\./x`, `/w/proj/\.\./x`, `x/\./`, `!\.\.`, `..`, `a/**/b`, "\uff0e\uff0e", `\.`, `/w/proj/./x`} {
		f.Add(s)
	}
	o := Options{Root: "/w/proj", RootAliases: []string{"/w/link"}, Home: "/w/proj/home"}
	f.Fuzz(func(t *testing.T, pat string) {
		r, err := Compile(pat, o)
		if err != nil {
			return
		}
		if r.Abs != "" && (r.Abs == "/w/proj" || strings.HasPrefix(r.Abs, "/w/proj/")) {
			t.Fatalf("Compile(%q): Abs %q lies under the root", pat, r.Abs)
		}
		assertInRoot(t, pat, r, o.Root)
	})
}

// TestFragmentRefusals: a fragment speaks for the working directory only
// (it may undo the policy's deny of a cwd path, Heimdall's L15, but may not
// name a path outside the cwd, on either side, negated or not), must be a
// regular file of the cwd (not a link), is at most 1 MiB, and a UTF-8 byte
// order mark does not eat its first line.
func TestFragmentRefusals(t *testing.T) {
	for _, tt := range []struct {
		name     string
		deny     []string // policy lines; "X/" is the outside directory
		frag     string   // fragment file name
		body     string   // its content; "X/" is the outside directory
		link     bool     // the fragment is a link to a file holding body
		err      string   // "" for success
		wantDeny []string // relative to the cwd ("X/" outside)
	}{
		{name: "cwd negation undoes the policy's deny (L15)", deny: []string{"secret"}, frag: ".moat-deny", body: "!secret\n"},
		{name: "negating an outside deny is refused", deny: []string{"X/secret"}, frag: ".moat-deny", body: "!X/secret\n", err: "line 1: deny pattern"},
		{name: "control: the policy's outside deny stands", deny: []string{"X/secret"}, wantDeny: []string{"X/secret"}},
		{name: "an outside deny is refused", frag: ".heimdall-deny", body: "# c\nX/secret\n", err: ".heimdall-deny: line 2: deny pattern"},
		{name: "an outside writable is refused", frag: ".moat-write", body: "X/\n", err: ".moat-write: line 1: writable pattern"},
		{name: "an outside writable negation is refused", frag: ".moat-write", body: "!X/secret\n", err: "outside the working directory"},
		{name: "escaped dots are refused", frag: ".moat-write", body: `\.\./outside` + "\n", err: `line 1: invalid filesystem pattern "\\.\\./outside"`},
		{name: "a linked fragment is refused", frag: ".moat-deny", body: "secret\n", link: true, err: "a symbolic link"},
		{name: "a byte order mark is skipped", frag: ".moat-deny", body: "\xef\xbb\xbfsecret\n", wantDeny: []string{"secret"}},
		{name: "a fragment over 1 MiB is refused", frag: ".moat-deny", body: strings.Repeat("#\n", 1<<19+1), err: "larger than 1 MiB"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			base, _ = filepath.EvalSymlinks(base)
			cwd, ext := filepath.Join(base, "proj"), filepath.Join(base, "outside")
			mkTree(t, cwd, "secret", "other/")
			mkTree(t, ext, "secret")
			sub := func(s string) string { return strings.ReplaceAll(s, "X/", ext+"/") }
			if tt.frag != "" {
				p := filepath.Join(cwd, tt.frag)
				if tt.link {
					p = filepath.Join(cwd, "other", "frag")
					if err := os.Symlink(p, filepath.Join(cwd, tt.frag)); err != nil {
						t.Fatal(err)
					}
				}
				if err := os.WriteFile(p, []byte(sub(tt.body)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var deny []string
			for _, d := range tt.deny {
				deny = append(deny, sub(d))
			}
			res, err := Materialize(Input{Root: cwd, Deny: deny})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.HasPrefix(err.Error(), "invalid filesystem ") {
					t.Fatalf("err = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, d := range tt.wantDeny {
				if strings.HasPrefix(d, "X/") {
					want = append(want, sub(d))
				} else {
					want = append(want, filepath.Join(cwd, d))
				}
			}
			if strings.Join(res.Deny, "\n") != strings.Join(want, "\n") {
				t.Errorf("Deny = %q, want %q", res.Deny, want)
			}
		})
	}
}

// TestFragmentErrorQuotesOddPath: a fragment path with a control
// character is quoted in the message.
func TestFragmentErrorQuotesOddPath(t *testing.T) {
	e := &FragmentError{Path: "/w/a\x1b[2Jb/.moat-deny", Line: 1, Err: os.ErrInvalid}
	if s := e.Error(); strings.ContainsRune(s, 0x1b) || !strings.Contains(s, `"/w/a\x1b[2Jb/.moat-deny"`) {
		t.Errorf("Error() = %q", s)
	}
	if s := (&FragmentError{Path: "/w/p/.moat-deny", Err: os.ErrInvalid}).Error(); !strings.HasPrefix(s, "invalid filesystem fragment /w/p/.moat-deny: ") {
		t.Errorf("Error() = %q", s)
	}
}

// FuzzMaterializeFragmentStaysInRoot: whatever the cwd's fragments say,
// the plan makes nothing outside the cwd writable or readable, and names
// nothing outside it at all (the tree has no link that leads out).
func FuzzMaterializeFragmentStaysInRoot(f *testing.F) {
	for _, s := range []string{`\.\./outside`, `.\./outside`, "!../outside/x", `d/\.\./\.\./outside`, "**", "outside", "*/x", "!*", "/"} {
		f.Add(s, s)
	}
	base, err := filepath.EvalSymlinks(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	cwd := filepath.Join(base, "proj")
	mkTree(f, cwd, "d/x", "d/e/", "x", ".env", "link -> d")
	mkTree(f, filepath.Join(base, "outside"), "x", "d/")
	f.Fuzz(func(t *testing.T, deny, writ string) {
		if len(deny)+len(writ) > 4096 {
			return
		}
		if err := os.WriteFile(filepath.Join(cwd, ".moat-deny"), []byte(deny), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(cwd, ".moat-write"), []byte(writ), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := Materialize(Input{Root: cwd, Home: filepath.Join(base, "home")})
		if err != nil {
			return
		}
		for _, l := range [][]string{res.Deny, res.Writable, res.Readable, res.ReadOnly, res.Seal} {
			for _, p := range l {
				if !paths.Under(p, cwd) {
					t.Fatalf("fragments %q / %q planned %s, outside the cwd", deny, writ, p)
				}
			}
		}
	})
}
