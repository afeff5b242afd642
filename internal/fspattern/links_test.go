package fspattern

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestMaterializeThroughLinks: a deny pattern whose way passes through a
// symbolic link to a directory denies the real path when the link leads
// inside the cwd, is an error naming the link when it leads outside and
// the pattern names it, and is recorded (not followed) when only "**"
// passes over it. A link cycle ends. The control names the real path.
func TestMaterializeThroughLinks(t *testing.T) {
	for _, tt := range []struct {
		name     string
		tree     []string
		deny     []string
		wantDeny []string
		linksOut []string
		err      string
	}{
		{name: "literal through a link", tree: []string{"real/secret", "conf -> real"}, deny: []string{"conf/secret"}, wantDeny: []string{"real/secret"}},
		{name: "glob through a link", tree: []string{"real/secret", "conf -> real"}, deny: []string{"conf/*"}, wantDeny: []string{"real/secret"}},
		{name: "nested links", tree: []string{"real/secret", "a/b -> ../real", "l -> a"}, deny: []string{"l/b/secret"}, wantDeny: []string{"real/secret"}},
		{name: "anchored star through a link", tree: []string{"x/real/secret", "x/conf -> real"}, deny: []string{"x/**/secret"}, wantDeny: []string{"x/real/secret"}},
		{name: "control: the real path", tree: []string{"real/secret", "conf -> real"}, deny: []string{"real/secret"}, wantDeny: []string{"real/secret"}},
		{name: "a link out of the cwd is an error", tree: []string{"conf -> ../outside"}, deny: []string{"conf/secret"}, err: "goes through the symbolic link"},
		{name: "a glob through a link out is an error", tree: []string{"conf -> ../outside"}, deny: []string{"*/secret"}, err: "leads outside the working directory"},
		{name: "** over a link out is recorded", tree: []string{"secret", "conf -> ../outside"}, deny: []string{"secret"}, wantDeny: []string{"secret"}, linksOut: []string{"conf"}},
		{name: "a cycle ends", tree: []string{"secret", "loop -> ."}, deny: []string{"loop/loop/secret", "**/secret"}, wantDeny: []string{"secret"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base, _ := filepath.EvalSymlinks(t.TempDir())
			cwd := filepath.Join(base, "proj")
			mkTree(t, cwd, tt.tree...)
			mkTree(t, filepath.Join(base, "outside"), "secret")
			res, err := Materialize(Input{Root: cwd, Deny: tt.deny})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), filepath.Join(cwd, "conf")) {
					t.Fatalf("err = %v, want one containing %q and naming the link", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rel := func(ps []string) []string {
				var out []string
				for _, p := range ps {
					out = append(out, strings.TrimPrefix(p, cwd+"/"))
				}
				return out
			}
			if got := rel(res.Deny); !reflect.DeepEqual(got, tt.wantDeny) {
				t.Errorf("Deny = %q, want %q", got, tt.wantDeny)
			}
			if got := rel(res.LinksOut); !reflect.DeepEqual(got, tt.linksOut) {
				t.Errorf("LinksOut = %q, want %q", got, tt.linksOut)
			}
		})
	}
}

// TestMaterializeHardLinks: a denied file's other names in the cwd are
// denied too, also for a file inside a denied directory and for an
// absolute deny outside the cwd; a name outside the cwd is a gap. The
// control has no second name and plans only the deny.
func TestMaterializeHardLinks(t *testing.T) {
	for _, tt := range []struct {
		name     string
		target   string // the denied file, under the cwd ("X/" outside)
		link     string // its other name, under the cwd ("X/" outside); "" for none
		deny     string
		wantDeny []string
		gaps     int
	}{
		{name: "denied file", target: ".env", link: "alias", deny: ".env", wantDeny: []string{".env", "alias"}},
		{name: "file in a denied directory", target: "cfg/key", link: "sub/alias", deny: "cfg", wantDeny: []string{"cfg", "sub/alias"}},
		{name: "both names denied", target: "cfg/key", link: "cfg/alias", deny: "cfg", wantDeny: []string{"cfg"}},
		{name: "absolute deny outside the cwd", target: "X/cred", link: "alias", deny: "X/cred", wantDeny: []string{"X/cred", "alias"}},
		{name: "other name outside the cwd is a gap", target: ".env", link: "X/alias", deny: ".env", wantDeny: []string{".env"}, gaps: 1},
		{name: "control: one name", target: ".env", deny: ".env", wantDeny: []string{".env"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base, _ := filepath.EvalSymlinks(t.TempDir())
			cwd, ext := filepath.Join(base, "proj"), filepath.Join(base, "outside")
			mkTree(t, cwd, "sub/", "cfg/")
			mkTree(t, ext, "x")
			place := func(p string) string {
				if strings.HasPrefix(p, "X/") {
					return filepath.Join(ext, p[2:])
				}
				return filepath.Join(cwd, p)
			}
			if err := os.WriteFile(place(tt.target), []byte("S"), 0o644); err != nil {
				t.Fatal(err)
			}
			if tt.link != "" {
				if err := os.Link(place(tt.target), place(tt.link)); err != nil {
					t.Fatal(err)
				}
			}
			deny := tt.deny
			if strings.HasPrefix(deny, "X/") {
				deny = place(deny)
			}
			res, err := Materialize(Input{Root: cwd, Deny: []string{deny}})
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, p := range tt.wantDeny {
				want = append(want, place(p))
			}
			if !reflect.DeepEqual(res.Deny, want) {
				t.Errorf("Deny = %q, want %q", res.Deny, want)
			}
			if len(res.HardLinkGaps) != tt.gaps || (tt.gaps > 0 && !strings.HasPrefix(res.HardLinkGaps[0], place(tt.target)+" (1 more)")) {
				t.Errorf("HardLinkGaps = %q, want %d", res.HardLinkGaps, tt.gaps)
			}
		})
	}
}
