//go:build unix

package hostinput

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadRefusesSandboxWritable: a file in a place that a sandbox of this
// run or of an earlier one could write, reached through a link there,
// hard-linked, or in a directory others may write, is refused unless its
// exact content is pinned; the same file elsewhere is read.
func TestReadRefusesSandboxWritable(t *testing.T) {
	type env struct {
		store   Store
		safe    string // a directory no sandbox could write
		place   string // a directory a sandbox could write
		current []Place
	}
	write := func(t *testing.T, p, s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	trust := func(t *testing.T, e env, p string) {
		t.Helper()
		b, _ := os.ReadFile(p)
		real, _, err := resolve(p)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := HashOf(b), error(nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.store.Trust(Pin{Path: real, Sum: sum}); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, e *env) string // returns the path to read
		want  string                            // "" to accept, else a fragment of the refusal
	}{
		{"control: a file outside every place", func(t *testing.T, e *env) string {
			p := filepath.Join(e.safe, "moat.toml")
			write(t, p, "x")
			return p
		}, ""},
		{"in the current run's place", func(t *testing.T, e *env) string {
			p := filepath.Join(e.place, "moat.toml")
			write(t, p, "x")
			e.current = []Place{{What: "the working directory", Path: e.place}}
			return p
		}, "sandbox of this run can write"},
		{"in an earlier run's place", func(t *testing.T, e *env) string {
			p := filepath.Join(e.place, "sub", "moat.toml")
			os.Mkdir(filepath.Dir(p), 0o700)
			write(t, p, "x")
			return p
		}, "earlier run could write"},
		{"in an earlier run's place, named with ..", func(t *testing.T, e *env) string {
			p := filepath.Join(e.place, "moat.toml")
			write(t, p, "x")
			return e.safe + "/../" + filepath.Base(e.place) + "/moat.toml"
		}, "earlier run could write"},
		{"control: in an earlier run's place, trusted", func(t *testing.T, e *env) string {
			p := filepath.Join(e.place, "moat.toml")
			write(t, p, "x")
			trust(t, *e, p)
			return p
		}, ""},
		{"trusted, then rewritten", func(t *testing.T, e *env) string {
			p := filepath.Join(e.place, "moat.toml")
			write(t, p, "x")
			trust(t, *e, p)
			write(t, p, "y")
			return p
		}, "earlier run could write"},
		{"a link in an earlier run's place to a trusted file", func(t *testing.T, e *env) string {
			p := filepath.Join(e.safe, "moat.toml")
			write(t, p, "x")
			trust(t, *e, p)
			l := filepath.Join(e.place, "moat.toml")
			os.Symlink(p, l)
			return l
		}, "reached through the link"},
		{"control: a link in a safe place to a safe file", func(t *testing.T, e *env) string {
			p := filepath.Join(e.safe, "real.toml")
			write(t, p, "x")
			l := filepath.Join(e.safe, "moat.toml")
			os.Symlink("real.toml", l)
			return l
		}, ""},
		{"a safe link to a file in a place", func(t *testing.T, e *env) string {
			p := filepath.Join(e.place, "moat.toml")
			write(t, p, "x")
			l := filepath.Join(e.safe, "moat.toml")
			os.Symlink(p, l)
			return l
		}, "earlier run could write"},
		{"a hard link", func(t *testing.T, e *env) string {
			p := filepath.Join(e.safe, "moat.toml")
			write(t, p, "x")
			os.Link(p, filepath.Join(e.safe, "other"))
			return p
		}, "hard links"},
		{"a directory every user may write", func(t *testing.T, e *env) string {
			d := filepath.Join(e.safe, "open")
			os.Mkdir(d, 0o700)
			os.Chmod(d, 0o777)
			p := filepath.Join(d, "moat.toml")
			write(t, p, "x")
			return p
		}, "every user"},
		{"not a regular file", func(t *testing.T, e *env) string {
			return e.safe
		}, "not a regular file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			state := filepath.Join(root, "state")
			safe := filepath.Join(root, "safe")
			place := filepath.Join(root, "place")
			for _, d := range []string{state, safe, place} {
				if err := os.Mkdir(d, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			e := &env{store: Store{Dir: state}, safe: safe, place: place}
			p := c.setup(t, e)
			if len(e.current) == 0 {
				if err := e.store.RecordPlaces([]string{place}); err != nil {
					t.Fatal(err)
				}
			}
			in, err := Read(p, Options{Subject: "config", Store: e.store, Current: e.current})
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if string(in.Data) != "x" {
					t.Fatalf("read %q", in.Data)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want a refusal saying %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("message is not one line: %q", err)
			}
		})
	}
}

// TestCheckCurrent: a file read before the run's places were known is
// refused once they are, unless trusted.
func TestCheckCurrent(t *testing.T) {
	root := t.TempDir()
	os.Chmod(root, 0o700)
	store := Store{Dir: root}
	p := filepath.Join(root, "work", "moat.toml")
	os.Mkdir(filepath.Dir(p), 0o700)
	os.WriteFile(p, []byte("x"), 0o600)
	in, err := Read(p, Options{Subject: "config", Store: store})
	if err != nil {
		t.Fatal(err)
	}
	places := []Place{{What: "the working directory", Path: filepath.Dir(p)}}
	err = in.CheckCurrent(places)
	var he *Error
	if !errors.As(err, &he) || !he.Trustable || !strings.Contains(err.Error(), "moat trust") {
		t.Fatalf("got %v, want a trustable refusal", err)
	}
	if err := store.Trust(Pin{Path: in.Real, Sum: in.Sum}); err != nil {
		t.Fatal(err)
	}
	if err := in.CheckCurrent(places); err != nil {
		t.Fatalf("trusted, still refused: %v", err)
	}
	if err := in.CheckCurrent(nil); err != nil {
		t.Fatalf("no place, refused: %v", err)
	}
}

// TestStoreRoundTrip: pins and places come back as recorded, and can be
// removed.
func TestStoreRoundTrip(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	os.Chmod(s.Dir, 0o700)
	if err := s.RecordPlaces([]string{"/x/y", "/x/y", "/z"}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Places()
	if err != nil || strings.Join(got, ",") != "/x/y,/z" {
		t.Fatalf("places %q, %v", got, err)
	}
	if p, _ := s.PastPlace("/x/y/a/b"); p != "/x/y" {
		t.Fatalf("PastPlace = %q", p)
	}
	if ok, err := s.ForgetPlace("/z"); !ok || err != nil {
		t.Fatalf("forget: %v %v", ok, err)
	}
	sum := strings.Repeat("ab", 32)
	if err := s.Trust(Pin{Path: "/a\nb", Sum: sum}); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Trusted("/a\nb", sum); !ok || err != nil {
		t.Fatalf("trusted: %v %v", ok, err)
	}
	if ok, err := s.Untrust("/a\nb"); !ok || err != nil {
		t.Fatalf("untrust: %v %v", ok, err)
	}
	if ok, _ := s.Trusted("/a\nb", sum); ok {
		t.Fatal("still trusted")
	}
}

// TestTopControl: a control name at the top of a recorded place is pinned
// by every run there, so that place does not make it suspect; a recorded
// place above its directory does.
func TestTopControl(t *testing.T) {
	root := t.TempDir()
	os.Chmod(root, 0o700)
	store := Store{Dir: filepath.Join(root, "state")}
	os.Mkdir(store.Dir, 0o700)
	place := filepath.Join(root, "place")
	os.MkdirAll(filepath.Join(place, "sub"), 0o700)
	for _, p := range []string{filepath.Join(place, ".moat-write"), filepath.Join(place, "sub", ".moat-write")} {
		os.WriteFile(p, []byte("x\n"), 0o600)
	}
	if err := store.RecordPlaces([]string{place}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		top  bool
		ok   bool
	}{
		{filepath.Join(place, ".moat-write"), true, true},
		{filepath.Join(place, ".moat-write"), false, false},
		{filepath.Join(place, "sub", ".moat-write"), true, false},
	} {
		_, err := Read(c.path, Options{Subject: "fragment", Store: store, TopControl: c.top})
		if (err == nil) != c.ok {
			t.Errorf("Read(%s, top %v) = %v, want ok %v", c.path, c.top, err, c.ok)
		}
	}
}

// TestForgedPins: pins in a state directory that a run could write are
// not believed.
func TestForgedPins(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o700)
	s := Store{Dir: dir}
	sum := strings.Repeat("ab", 32)
	if err := s.Trust(Pin{Path: "/x", Sum: sum}); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Trusted("/x", sum); !ok || err != nil {
		t.Fatalf("control: %v %v", ok, err)
	}
	if err := s.RecordPlaces([]string{dir}); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Trusted("/x", sum); ok || err == nil {
		t.Fatalf("pins in a writable place believed: %v %v", ok, err)
	}
}
