package moat

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestResolvePaths(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	mk := func(p string) string { os.MkdirAll(filepath.Join(base, p), 0o755); return filepath.Join(base, p) }
	ln := func(target, p string) string {
		os.Symlink(target, filepath.Join(base, p))
		return filepath.Join(base, p)
	}
	work := mk("work")
	secrets := mk("home/.ssh")
	data := mk("data")
	// A planted link in the writable working directory, pointing at secrets.
	planted := ln(secrets, "work/ssh")
	// The user's own spelling through a link outside anything writable.
	alias := ln(data, "alias")
	// Another spelling of the working directory.
	workAlias := ln(work, "work-alias")
	// A writable path that is itself a link.
	cache := ln(data, "cache")

	cases := []struct {
		name       string
		reqs       []PathRequest
		redirected bool
		want       string
	}{
		{"link in the user's spelling is followed", []PathRequest{{alias, READ}}, false, data},
		{"planted link in the workdir is refused", []PathRequest{{planted, READ}}, true, ""},
		{"planted link reached through another spelling", []PathRequest{{filepath.Join(workAlias, "ssh"), READ}}, true, ""},
		{"writable path that is a link", []PathRequest{{cache, WRITE}}, true, ""},
		{"plain directory", []PathRequest{{data, WRITE}}, false, data},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, grants, err := ResolvePaths(work, tc.reqs)
			if tc.redirected {
				if !errors.Is(err, ErrGrantRedirected) {
					t.Fatalf("err = %v, grants %v; want ErrGrantRedirected", err, grants)
				}
				return
			}
			if err != nil || len(grants) != 1 || grants[0].Path != tc.want {
				t.Fatalf("grants %v, %v; want %s", grants, err, tc.want)
			}
		})
	}
	// A link inside a WRITE grant is refused too.
	wr := mk("writable")
	inner := ln(secrets, "writable/x")
	if _, _, err := ResolvePaths("", []PathRequest{{wr, WRITE}, {inner, READ}}); !errors.Is(err, ErrGrantRedirected) {
		t.Fatalf("link inside a WRITE grant: err = %v", err)
	}
	// The working directory itself: a link is refused, a spelling through
	// a link outside is followed.
	if _, _, err := ResolvePaths(workAlias, nil); !errors.Is(err, ErrGrantRedirected) {
		t.Fatalf("workdir that is a link: err = %v", err)
	}
	if wd, _, err := ResolvePaths(filepath.Join(alias), nil); err == nil {
		t.Fatalf("workdir %q accepted although it is a link", wd)
	}
}

// ResolvePaths' refusals are values: a *PlaceError naming the path as the
// caller wrote it, with the cause for errors.Is, and no "moat: " prefix,
// which only the command adds.
func TestResolvePathsErrorsAreValues(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	missing := filepath.Join(base, "missing")
	link := filepath.Join(base, "link")
	if err := os.Symlink(base, link); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		reqs    []PathRequest
		subject string
		is      error
		msg     string
	}{
		{"missing", []PathRequest{{missing, READ}}, "path", os.ErrNotExist, `path "` + missing + `": no such file or directory`},
		{"no access", []PathRequest{{base, 0}}, "grant", nil, `grant "` + base + `": no access`},
		{"writable link", []PathRequest{{link, WRITE}}, "grant", ErrGrantRedirected, `grant "` + link + `": is a symbolic link`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ResolvePaths("", tc.reqs)
			var pe *PlaceError
			if !errors.As(err, &pe) || pe.Subject != tc.subject || pe.Path != tc.reqs[0].Path {
				t.Fatalf("ResolvePaths = %v, want a *PlaceError about %s %s", err, tc.subject, tc.reqs[0].Path)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("errors.Is(%v, %v) = false", err, tc.is)
			}
			if err.Error() != tc.msg {
				t.Errorf("message %q, want %q", err, tc.msg)
			}
		})
	}
}
