package quarantine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/moat-sandbox/moat/internal/paths"
)

// Target is one path to restore: where it lies in the entry, and the path
// it had on the host, where it goes back. The zero value is nothing.
type Target struct {
	Src, Dest string
}

// Resolve finds each path of paths (a path as the entry lists it, or a
// directory above such paths inside the place, such as .git) in the entry
// e and checks it may go back: the path is free on the host (nothing is
// ever replaced) and its parent directory exists and is reached without a
// link. It checks every path before it returns, so that a restore is all
// or nothing as far as checks go.
func Resolve(e Entry, paths []string) ([]Target, error) {
	if e.Live {
		return nil, fmt.Errorf("entry %s: its run has not finished", e.ID)
	}
	var out []Target
	for _, want := range paths {
		if !filepath.IsAbs(want) || filepath.Clean(want) != want {
			return nil, fmt.Errorf("%s: give the path as moat quarantine list shows it, absolute", Escape(want, false))
		}
		t, ok := find(e, want)
		if !ok {
			return nil, fmt.Errorf("%s: not in entry %s", Escape(want, false), e.ID)
		}
		if _, err := os.Lstat(t.Dest); err == nil {
			return nil, fmt.Errorf("%s: exists on the host; moat never replaces a file when it restores (move it away first)", Escape(want, false))
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", Escape(want, false), err)
		}
		parent := filepath.Dir(t.Dest)
		real, err := filepath.EvalSymlinks(parent)
		if err != nil {
			return nil, fmt.Errorf("%s: its directory: %w", Escape(want, false), err)
		}
		if real != parent {
			return nil, fmt.Errorf("%s: its directory is reached through a link (to %s); moat restores only into the directory the entry came from", Escape(want, false), Escape(real, false))
		}
		out = append(out, t)
	}
	return out, nil
}

// find locates want in e: the path of one of its files, or of a directory
// in its place's part of the entry.
func find(e Entry, want string) (Target, bool) {
	for _, p := range e.Places {
		rel, ok := strings.CutPrefix(want, p.Path+"/")
		if p.Path == "/" {
			rel, ok = strings.CutPrefix(want, "/")
		}
		if !ok || rel == "" || rel == ".." || strings.HasPrefix(rel, "../") {
			continue
		}
		src := filepath.Join(p.Dir, rel)
		if src == p.Dir || !paths.Under(src, p.Dir) {
			continue
		}
		if _, err := os.Lstat(src); err == nil {
			return Target{Src: src, Dest: want}, true
		}
	}
	return Target{}, false
}

// Restore moves each target back, never replacing anything: the move
// fails if something appeared at its path since Resolve. A target on
// another file system than the state directory is refused (named, with
// where it lies, to copy by hand).
func Restore(ts []Target) error {
	for _, t := range ts {
		if err := renameNoReplace(t.Src, t.Dest); err != nil {
			if isCrossDevice(err) {
				return fmt.Errorf("%s: lies on another file system than the quarantine; copy it by hand from %s", Escape(t.Dest, false), Escape(t.Src, false))
			}
			return fmt.Errorf("%s: %w", Escape(t.Dest, false), err)
		}
	}
	return nil
}
