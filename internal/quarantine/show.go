package quarantine

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"unicode/utf8"
)

// Bounds of what Show prints: of each file read, of all files read
// together, of the output (names and escaped contents, which can be six
// times the bytes read), and of the files it describes.
const (
	MaxShowFile   = 16 << 10
	MaxShowTotal  = 256 << 10
	MaxShowOutput = 1 << 20
	MaxShowFiles  = 1000
)

// Show writes, for each file of e, a header line (its original path, type
// and size) and, for a regular file, its content, escaped (see [Escape]),
// at most MaxShowFile bytes of each and MaxShowTotal in all. A link is
// shown with its target, never followed; a FIFO, socket or device is
// named, never opened. only, when not nil, restricts it to the paths that
// only holds (original paths). It writes at most MaxShowOutput bytes and
// MaxShowFiles files, then a line that says how many files it left out,
// and a line when e itself was listed only in part.
func Show(w io.Writer, e Entry, only map[string]bool) error {
	out := &boundedWriter{w: w, left: MaxShowOutput}
	left := int64(MaxShowTotal)
	shown, skipped := 0, 0
	for _, p := range e.Places {
		for _, f := range p.Files {
			orig := filepath.Join(p.Path, f.Rel)
			if only != nil && !only[orig] && !underAny(orig, only) {
				continue
			}
			if shown >= MaxShowFiles || out.left <= 0 {
				skipped++
				continue
			}
			shown++
			if err := showFile(out, filepath.Join(p.Dir, f.Rel), orig, &left); err != nil {
				return err
			}
		}
	}
	if out.cut {
		if _, err := fmt.Fprintf(w, "\n(output cut at %d bytes)\n", MaxShowOutput); err != nil {
			return err
		}
	}
	if skipped > 0 {
		if _, err := fmt.Fprintf(w, "(%d more files not shown: at most %d files and %d bytes of output; restore with a narrower PATH shows fewer)\n", skipped, MaxShowFiles, MaxShowOutput); err != nil {
			return err
		}
	}
	if e.Truncated {
		_, err := fmt.Fprintf(w, "(the entry holds more than the %d files, directories and links read of it; not all are named above)\n", MaxWalk)
		return err
	}
	return nil
}

// boundedWriter passes at most left bytes on to w, cut at a rune
// boundary, and drops the rest, noting the cut.
type boundedWriter struct {
	w    io.Writer
	left int
	cut  bool
}

func (b *boundedWriter) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) > b.left {
		b.cut = true
		k := max(b.left, 0)
		for k > 0 && !utf8.RuneStart(p[k]) {
			k--
		}
		p = p[:k]
	}
	b.left -= len(p)
	if len(p) > 0 {
		if _, err := b.w.Write(p); err != nil {
			return 0, err
		}
	}
	if b.cut {
		b.left = 0
	}
	return n, nil
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
