//go:build unix

package hostiletree

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// maxDepth bounds how deep a walk descends, and so how many directories
// it holds open: a removal moves a deeper directory up into the trash, to
// be removed from there; a measure stops counting below it.
const maxDepth = 32

// batch is how many names a walk reads from a directory at a time.
const batch = 256

// openDirAt opens the directory name in dfd without following a link,
// without blocking, and only if it is a directory. A directory whose mode
// keeps its owner out is made the owner's (0700) first, without following
// a link to do so.
func openDirAt(dfd int, name string) (*os.File, error) {
	const flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC
	fd, err := unix.Openat(dfd, name, flags, 0)
	if err == unix.EACCES {
		if chmodDirNoFollow(dfd, name) == nil {
			fd, err = unix.Openat(dfd, name, flags, 0)
		}
	}
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

// Measure returns the disk use of the tree at dir, counting links and
// special files as themselves, and whether it saw everything within budget
// entries. A tree it cannot open measures 0, incomplete.
func Measure(dir string, budget int) (int64, bool) {
	f, err := openDirAt(unix.AT_FDCWD, dir)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	var size int64
	complete := measureDir(f, 0, &budget, &size)
	return size, complete
}

func measureDir(f *os.File, depth int, budget *int, size *int64) bool {
	complete := true
	dfd := int(f.Fd())
	for {
		names, _ := f.Readdirnames(batch)
		if len(names) == 0 { // done, or unreadable
			return complete
		}
		for _, n := range names {
			if *budget <= 0 {
				return false
			}
			*budget--
			var st unix.Stat_t
			if unix.Fstatat(dfd, n, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
				continue
			}
			*size += int64(st.Blocks) * 512
			if st.Mode&unix.S_IFMT != unix.S_IFDIR {
				continue
			}
			if depth+1 >= maxDepth {
				complete = false
				continue
			}
			sub, err := openDirAt(dfd, n)
			if err != nil {
				complete = false
				continue
			}
			if !measureDir(sub, depth+1, budget, size) {
				complete = false
			}
			sub.Close()
		}
	}
}

// EmptyTrash removes what lies in the trash directory (the directory
// itself stays), spending at most *budget entries. It returns [ErrBudget]
// when the budget ran out first; a later call goes on where this one
// stopped. A missing trash is empty. What cannot be removed is left, and
// the first error about it returned, after everything else was removed.
func EmptyTrash(trash string, budget *int) error {
	t, err := openDirAt(unix.AT_FDCWD, trash)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return err
	}
	defer t.Close()
	r := remover{trash: int(t.Fd()), budget: budget}
	var firstErr error
	for pass := 0; ; pass++ {
		if _, err := t.Seek(0, 0); err != nil {
			return err
		}
		names, _ := t.Readdirnames(batch)
		if len(names) == 0 {
			return firstErr
		}
		progress := false
		for _, n := range names {
			switch err := r.remove(r.trash, n, 0); {
			case err == nil:
				progress = true
			case errors.Is(err, ErrBudget):
				return err
			case firstErr == nil:
				firstErr = err
			}
		}
		if !progress {
			return firstErr // what is left cannot be removed now
		}
	}
}

// remover removes hostile trees: it never follows a link, opens nothing
// but directories, and moves a directory deeper than maxDepth up into the
// trash rather than holding more directories open.
type remover struct {
	trash  int
	budget *int
	n      int
}

func (r *remover) remove(dfd int, name string, depth int) error {
	if *r.budget <= 0 {
		return ErrBudget
	}
	*r.budget--
	err := unix.Unlinkat(dfd, name, 0)
	if err == nil || err == unix.ENOENT {
		return nil
	}
	if err != unix.EISDIR && err != unix.EPERM {
		return err
	}
	// A directory (Linux says EISDIR, the BSDs EPERM).
	if depth >= maxDepth {
		r.n++
		err := unix.Renameat(dfd, name, r.trash, deepName(r.n))
		if err == unix.EACCES || err == unix.EPERM {
			// Moving a directory to another parent rewrites its "..":
			// the directory itself must be writable.
			if chmodDirNoFollow(dfd, name) == nil {
				err = unix.Renameat(dfd, name, r.trash, deepName(r.n))
			}
		}
		return err
	}
	sub, err := openDirAt(dfd, name)
	if err == unix.ENOENT {
		return nil // removed meanwhile (another moat's prune of the same trash)
	}
	if err != nil {
		return err
	}
	err = r.empty(sub, depth+1)
	sub.Close()
	if err != nil {
		return err
	}
	if err := unix.Unlinkat(dfd, name, unix.AT_REMOVEDIR); err != nil && err != unix.ENOENT {
		return err
	}
	return nil
}

// empty removes every entry of the open directory f, making it writable
// first (the Go module cache leaves its directories read-only, a sandbox
// any mode it likes). An entry it cannot remove is passed over, so the
// rest still go; the first such error is returned. When a pass removed
// something it reads the directory again from the start, so that no name
// is missed by a directory read that removals moved under it.
func (r *remover) empty(f *os.File, depth int) error {
	dfd := int(f.Fd())
	_ = unix.Fchmod(dfd, 0o700)
	var firstErr error
	removed := false
	for {
		names, _ := f.Readdirnames(batch)
		if len(names) == 0 {
			if !removed {
				return firstErr
			}
			if _, err := f.Seek(0, 0); err != nil {
				return err
			}
			removed = false
			continue
		}
		for _, n := range names {
			switch err := r.remove(dfd, n, depth); {
			case err == nil:
				removed = true
			case errors.Is(err, ErrBudget):
				return err
			case firstErr == nil:
				firstErr = err
			}
		}
	}
}

// MakeOwnersDir makes the directory at path its owner's (0700) without
// following a link in its last element: moving a directory to another
// parent needs it writable (its ".." changes), and a sandbox can leave it
// 0500.
func MakeOwnersDir(path string) error { return chmodDirNoFollow(unix.AT_FDCWD, path) }
