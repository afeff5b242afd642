package linux

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/spec"
	"golang.org/x/sys/unix"
)

// TestApplyFSWritablePlaces: with a mount namespace a denied path that
// exists in a writable place is masked, not carved, and the directories
// on the way are pinned; a missing control name at a place's top gets
// nothing. Elsewhere, and without a mount namespace, the rules are carved.
func TestApplyFSWritablePlaces(t *testing.T) {
	w := t.TempDir()
	ro := t.TempDir()
	for _, p := range []string{"top.env", "sub/deep/secret", "ro/secret"} {
		base := w
		if strings.HasPrefix(p, "ro/") {
			base, p = ro, strings.TrimPrefix(p, "ro/")
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(base, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(base, p), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := unix.Mkfifo(filepath.Join(w, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	deny := []string{filepath.Join(w, "top.env"), filepath.Join(w, "sub/deep/secret"), filepath.Join(ro, "secret"), filepath.Join(w, "fifo"), filepath.Join(w, "gone/x")}
	readOnly := []string{filepath.Join(w, ".agents"), filepath.Join(w, ".git"), filepath.Join(w, "sub/.pi"), filepath.Join(w, "missing")}
	tests := []struct {
		name       string
		mount      bool
		carved     []string
		masked     []string
		pins       []string
		notCarved  []string
		readCarved []string
	}{
		{
			name:       "mount namespace",
			mount:      true,
			carved:     []string{filepath.Join(ro, "secret"), filepath.Join(w, "fifo"), filepath.Join(w, "gone/x")},
			masked:     deny,
			pins:       []string{filepath.Join(w, "sub"), filepath.Join(w, "sub/deep")},
			notCarved:  []string{filepath.Join(w, "top.env"), filepath.Join(w, "sub/deep/secret"), filepath.Join(w, ".agents"), filepath.Join(w, ".git")},
			readCarved: []string{filepath.Join(w, "sub/.pi"), filepath.Join(w, "missing")},
		},
		{
			name:       "Landlock alone",
			carved:     deny,
			notCarved:  []string{filepath.Join(w, ".agents"), filepath.Join(w, ".git")},
			readCarved: []string{filepath.Join(w, "sub/.pi"), filepath.Join(w, "missing")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &Engine{}
			e.policy.WorkDir = w
			e.policy.FS = spec.FS{Deny: deny, ReadOnly: readOnly}
			s := helperSpec{WorkDir: w, ReadOnly: []string{ro}}
			s.NS.Mount = tt.mount
			e.applyFS(&s)
			carved := map[string]uint64{}
			for _, c := range s.Carve {
				carved[c.Path] = c.Keep
			}
			for _, p := range tt.carved {
				if k, ok := carved[p]; !ok || k != 0 {
					t.Errorf("%s: not carved out (keep %v, %v)", p, k, ok)
				}
			}
			for _, p := range tt.readCarved {
				if k, ok := carved[p]; !ok || k != fsReadExec {
					t.Errorf("%s: not carved read-only (keep %v, %v)", p, k, ok)
				}
			}
			for _, p := range tt.notCarved {
				if _, ok := carved[p]; ok {
					t.Errorf("%s: carved, freezing its writable place", p)
				}
			}
			var masks []string
			for _, m := range s.DenyMasks {
				masks = append(masks, m.Path)
			}
			if !slices.Equal(masks, tt.masked) {
				t.Errorf("masks %v, want %v", masks, tt.masked)
			}
			slices.Sort(s.ControlPins)
			if !slices.Equal(s.ControlPins, tt.pins) {
				t.Errorf("pins %v, want %v", s.ControlPins, tt.pins)
			}
		})
	}
}

// TestDenyGuardPlaceholders: a missing denied path with an existing
// parent in a writable place gets a marked placeholder, which cleanup
// removes; a stale one (dead owner) is swept and replaced; one of a live
// owner, a user's directory and a path outside the places are left alone.
func TestDenyGuardPlaceholders(t *testing.T) {
	w := t.TempDir()
	outside := t.TempDir()
	mk := func(p, marker string) {
		t.Helper()
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if marker != "" {
			if err := os.WriteFile(filepath.Join(p, placeholderMarker), []byte(marker), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	stale := placeholderPrefix + "2147483646 started 1; removed when that run ends\n"
	mk(filepath.Join(w, "stale"), stale)
	mk(filepath.Join(w, "users"), "")
	if err := os.WriteFile(filepath.Join(w, "users", "f"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	fresh, stalePath, users := filepath.Join(w, "fresh"), filepath.Join(w, "stale"), filepath.Join(w, "users")
	deep, out, granted := filepath.Join(w, "no/parent"), filepath.Join(outside, "x"), filepath.Join(w, "granted")
	p := spec.Policy{WorkDir: w, FS: spec.FS{Deny: []string{fresh, stalePath, users, deep, out, granted}}}
	g := planDenyGuards(&p, func(d string) bool { return d == granted })
	if want := []string{fresh, stalePath, deep}; !slices.Equal(g.paths, want) {
		t.Fatalf("guards %v, want %v", g.paths, want)
	}
	for _, d := range g.paths {
		b, err := os.ReadFile(filepath.Join(d, g.marker))
		if err != nil || string(b) != ownerLine() {
			t.Errorf("%s: marker %q, %v", d, b, err)
		}
	}
	for _, d := range []string{out, granted} {
		if exists(d) {
			t.Errorf("%s was created", d)
		}
	}
	// A second engine shares the live placeholders; its Close keeps them
	// for the first.
	g2 := planDenyGuards(&p, func(d string) bool { return d == granted })
	if !slices.Equal(g2.paths, g.paths) || g2.marker == g.marker {
		t.Errorf("a second engine guards %v with marker %s; want %v shared", g2.paths, g2.marker, g.paths)
	}
	g2.cleanup()
	if !exists(filepath.Join(fresh, g.marker)) || exists(filepath.Join(fresh, g2.marker)) {
		t.Errorf("the second engine's cleanup took the first's placeholder, or left its own marker")
	}
	// What the host put into a guard stays; the marker goes.
	if err := os.WriteFile(filepath.Join(fresh, "host.txt"), []byte("h"), 0o644); err != nil {
		t.Fatal(err)
	}
	marker := g.marker
	g.cleanup()
	if exists(filepath.Dir(deep)) {
		t.Errorf("cleanup left the directory made on the way to %s", deep)
	}
	if exists(stalePath) || exists(filepath.Join(fresh, marker)) || !exists(filepath.Join(fresh, "host.txt")) {
		t.Errorf("cleanup: stale %v, fresh marker %v, host file %v", exists(stalePath), exists(filepath.Join(fresh, marker)), exists(filepath.Join(fresh, "host.txt")))
	}
	// A user's directory holding only a file named like a marker, without
	// an owner line, is not a placeholder.
	mk(filepath.Join(w, "fake"), "the user's own\n")
	if isPlaceholder(filepath.Join(w, "fake")) {
		t.Errorf("a user's directory taken for a placeholder")
	}
	sweepDenyGuard(filepath.Join(w, "fake"))
	if !exists(filepath.Join(w, "fake", placeholderMarker)) {
		t.Errorf("the sweep removed a user's file")
	}
	if b, err := os.ReadFile(filepath.Join(users, "f")); err != nil || string(b) != "mine" {
		t.Errorf("the user's directory changed: %q, %v", b, err)
	}
}

// TestDenyGuardFilePlaceholder: a missing denied .git gets a file holding
// the owner line, not a directory (go build takes a .git directory for a
// repository); cleanup removes it. A stale one is swept and replaced; a
// live one of another run, and a user's .git file, are left alone.
func TestDenyGuardFilePlaceholder(t *testing.T) {
	stale := placeholderPrefix + "2147483646 started 1; removed when that run ends\n"
	tests := []struct {
		name    string
		before  string // the .git file's content; "" for none
		guarded bool
		after   string // what is there after cleanup; "" for nothing
	}{
		{"missing", "", true, ""},
		{"stale placeholder", stale, true, ""},
		{"another live run's", ownerLine(), false, ownerLine()},
		{"the user's gitlink", "gitdir: ../x\n", false, "gitdir: ../x\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := t.TempDir()
			d := filepath.Join(w, ".git")
			if tt.before != "" {
				if err := os.WriteFile(d, []byte(tt.before), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			g := planDenyGuards(&spec.Policy{WorkDir: w, FS: spec.FS{Deny: []string{d}}}, func(string) bool { return false })
			if got := slices.Contains(g.files, d); got != tt.guarded {
				t.Fatalf("guarded %v, want %v", got, tt.guarded)
			}
			if tt.guarded {
				fi, err := os.Lstat(d)
				if err != nil || !fi.Mode().IsRegular() {
					t.Fatalf("the placeholder: %v, %v; want a regular file", fi, err)
				}
			}
			g.cleanup()
			b, err := os.ReadFile(d)
			if tt.after == "" && err == nil || tt.after != "" && string(b) != tt.after {
				t.Errorf("after cleanup: %q, %v; want %q", b, err, tt.after)
			}
		})
	}
}
