package runjournal

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/moat-sandbox/moat/internal/gitguard"
	"github.com/moat-sandbox/moat/internal/hostiletree"
)

// quarantineDir is where sandbox id's entries of place go.
func quarantineDir(root, id, place string) string {
	return filepath.Join(root, "quarantine", id, escapePlace(place))
}

// escapePlace turns a place's path into one file name: every byte but
// letters, digits, '.', '_' and '-' becomes %XX ("/" is %2F).
func escapePlace(place string) string {
	var b strings.Builder
	for i := 0; i < len(place); i++ {
		c := place[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// The quarantine copies an entry when the place and the state directory
// lie on different file systems. What it copies was written by a
// sandbox, so the copies of one Close or one sweep have a bound: bytes
// (a sparse file, or many hard links of one, would otherwise cost their
// full size each) and entries. Past it the copy is undone and the entry
// stays set aside in its place, under its quarantine name, and is
// reported; the journal is kept, so the next run tries again.
const (
	maxQuarantineCopyBytes   = 256 << 20
	maxQuarantineCopyEntries = 100000
)

// copyBudget is what copies may still cost; the zero value allows none.
type copyBudget struct {
	bytes   int64
	entries int
}

func newCopyBudget() *copyBudget {
	return &copyBudget{bytes: maxQuarantineCopyBytes, entries: maxQuarantineCopyEntries}
}

// quarantine moves p, an entry inside place, to the quarantine as rel
// (its path relative to the place, named as before it was set aside), and
// returns where it went. It never replaces anything there. A copy across
// file systems spends b.
func quarantine(root, id, place, p, rel string, b *copyBudget) (string, error) {
	base := quarantineDir(root, id, place)
	dest := filepath.Join(base, rel)
	if !strings.HasPrefix(dest, base+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is not inside %s", rel, place)
	}
	if _, err := stateSub(root, "quarantine"); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o700); err != nil {
		return "", err
	}
	for i := 0; ; i++ {
		d := dest
		if i > 0 {
			d = fmt.Sprintf("%s.%d", dest, i)
		}
		if _, err := os.Lstat(d); err == nil {
			if i > 100 {
				return "", fmt.Errorf("every name like %s.N is taken", dest)
			}
			continue
		}
		dest = d
		break
	}
	err := os.Rename(p, dest)
	if errors.Is(err, fs.ErrPermission) && hostiletree.MakeOwnersDir(p) == nil {
		// A directory the sandbox left unwritable (0500): moving it to
		// another parent rewrites its "..".
		err = os.Rename(p, dest)
	}
	if err != nil && isCrossDevice(err) {
		if err = copyTree(p, dest, b); err == nil {
			// The original is the sandbox's tree: it may hold
			// directories left unwritable or unsearchable.
			budget := 2 * maxQuarantineCopyEntries
			err = hostiletree.RemoveTree(p, &budget)
		} else {
			_ = os.RemoveAll(dest) // the original stays where it was
		}
	}
	if err != nil {
		return "", err
	}
	return dest, nil
}

// copyTree copies src to dst, which must not exist, without following
// links, spending b; anything but directories, regular files and links
// is refused.
func copyTree(src, dst string, b *copyBudget) error {
	fi, err := os.Lstat(src)
	if err != nil {
		return err
	}
	b.entries--
	if fi.Mode().IsRegular() {
		b.bytes -= fi.Size()
	}
	if b.entries < 0 || b.bytes < 0 {
		return fmt.Errorf("copying it to another file system would take more than %d entries or %d bytes", maxQuarantineCopyEntries, maxQuarantineCopyBytes)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		t, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(t, dst)
	case fi.IsDir():
		if err := os.Mkdir(dst, 0o700); err != nil {
			return err
		}
		entries, err := os.ReadDir(src)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if err := copyTree(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name()), b); err != nil {
				return err
			}
		}
		return os.Chmod(dst, fi.Mode().Perm()|0o700)
	case fi.Mode().IsRegular():
		in, err := os.Open(src)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm()&0o700|0o600)
		if err != nil {
			return err
		}
		_, err = io.Copy(out, io.LimitReader(in, fi.Size())) // no more than was counted
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		return err
	}
	return fmt.Errorf("%s is neither a file, a directory nor a link", src)
}

// quarantineFindings moves what Close set aside in the places into the
// quarantine, and rewrites each finding to say where it went.
func (run *Run) quarantineFindings(found []gitguard.Finding) []gitguard.Finding {
	if run.file == nil {
		return found
	}
	places := run.places
	sort.Slice(places, func(i, j int) bool { return len(places[i]) > len(places[j]) })
	budget := newCopyBudget()
	for i, f := range found {
		if f.MovedTo == "" {
			continue
		}
		place := ""
		for _, w := range places {
			if strings.HasPrefix(f.Path, strings.TrimSuffix(w, string(filepath.Separator))+string(filepath.Separator)) {
				place = w
				break
			}
		}
		if place == "" {
			continue
		}
		rel, err := filepath.Rel(place, f.Path)
		if err != nil {
			continue
		}
		dest, err := quarantine(run.file.root, run.id, place, f.MovedTo, rel, budget)
		if err != nil {
			found[i].Detail += fmt.Sprintf("; it could not be moved out of %s to the quarantine: %v (the next run retries)", place, err)
			run.file.keep = true // swept once this process is gone
			continue
		}
		found[i].Detail = strings.Replace(f.Detail, "moved to "+f.MovedTo, "moved to "+dest, 1)
		found[i].MovedTo = dest
	}
	return found
}
