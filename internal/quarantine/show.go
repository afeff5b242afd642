package quarantine

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Bounds of what Show prints: of each file, and of all files together.
const (
	MaxShowFile  = 16 << 10
	MaxShowTotal = 256 << 10
)

// Show writes, for each file of e, a header line (its original path, type
// and size) and, for a regular file, its content, escaped (see [Escape]),
// at most MaxShowFile bytes of each and MaxShowTotal in all. A link is
// shown with its target, never followed; a FIFO, socket or device is
// named, never opened. only, when not nil, restricts it to the paths that
// only holds (original paths).
func Show(w io.Writer, e Entry, only map[string]bool) error {
	left := int64(MaxShowTotal)
	for _, p := range e.Places {
		for _, f := range p.Files {
			orig := filepath.Join(p.Path, f.Rel)
			if only != nil && !only[orig] && !underAny(orig, only) {
				continue
			}
			if err := showFile(w, filepath.Join(p.Dir, f.Rel), orig, &left); err != nil {
				return err
			}
		}
	}
	return nil
}

// underAny reports whether p lies inside one of the paths of set.
func underAny(p string, set map[string]bool) bool {
	for d := filepath.Dir(p); d != "/" && d != "."; d = filepath.Dir(d) {
		if set[d] {
			return true
		}
	}
	return false
}

// showFile writes one file: header, then content.
func showFile(w io.Writer, src, orig string, left *int64) error {
	fi, err := os.Lstat(src)
	if err != nil {
		_, err = fmt.Fprintf(w, "== %s (gone: %v)\n", Escape(orig, false), err)
		return err
	}
	switch m := fi.Mode(); {
	case m&fs.ModeSymlink != 0:
		t, _ := os.Readlink(src)
		_, err = fmt.Fprintf(w, "== %s (link to %s, not followed)\n", Escape(orig, false), Escape(t, false))
		return err
	case m.IsDir():
		_, err = fmt.Fprintf(w, "== %s (empty directory)\n", Escape(orig, false))
		return err
	case !m.IsRegular():
		_, err = fmt.Fprintf(w, "== %s (%s, not opened)\n", Escape(orig, false), kind(m))
		return err
	}
	if _, err := fmt.Fprintf(w, "== %s (%d bytes, mode %04o)\n", Escape(orig, false), fi.Size(), fi.Mode().Perm()); err != nil {
		return err
	}
	data, size, err := readBounded(src, min(MaxShowFile, *left))
	if err != nil {
		_, err = fmt.Fprintf(w, "(not read: %v)\n", err)
		return err
	}
	*left -= int64(len(data))
	text := Escape(string(data), true)
	if len(text) > 0 && text[len(text)-1] != '\n' {
		text += "\n"
	}
	if _, err := io.WriteString(w, text); err != nil {
		return err
	}
	if size > int64(len(data)) {
		_, err = fmt.Fprintf(w, "(%d more bytes not shown)\n", size-int64(len(data)))
	}
	return err
}

// readBounded reads at most max bytes of the regular file at p, opened
// without following a link and without blocking, and returns them with
// the file's size.
func readBounded(p string, max int64) ([]byte, int64, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("not a regular file")
	}
	if max < 0 {
		max = 0
	}
	data, err := io.ReadAll(io.LimitReader(f, max))
	return data, fi.Size(), err
}

// kind names a file type that is neither file, directory nor link.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// Kind names f's type: "file", "directory", "link", "FIFO", "socket",
// "device" or "special file".
func (f File) Kind() string {
	switch m := f.Mode; {
	case m.IsRegular():
		return "file"
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "link"
	}
	return kind(f.Mode)
}
