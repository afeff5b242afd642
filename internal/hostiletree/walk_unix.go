//go:build unix

package hostiletree

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// maxDepth bounds how deep a removal descends, and so how many
// directories it holds open: it moves a deeper directory up into the
// trash, to be removed from there. A measure holds one open at any depth.
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
// entries. A tree it cannot open measures 0, incomplete; so does a part
// it cannot open or that changed under it.
//
// No depth fools it: it reads each directory whole before it goes into
// any of its subdirectories, and holds only the directory it is in open,
// going back up through ".." and checking that it arrived where it came
// from. The names waiting to be visited are bounded by the budget.
func Measure(dir string, budget int) (int64, bool) {
	cur, err := openDirAt(unix.AT_FDCWD, dir)
	if err != nil {
		return 0, false
	}
	defer func() { cur.Close() }()
	var size int64
	top, ok := readLevel(cur, &budget, &size)
	if !ok {
		return size, false
	}
	complete := top.complete
	stack := []level{top}
	for len(stack) > 0 {
		l := &stack[len(stack)-1]
		if len(l.subdirs) == 0 {
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				break
			}
			up, err := openDirAt(int(cur.Fd()), "..")
			if err != nil {
				return size, false
			}
			var st unix.Stat_t
			if unix.Fstat(int(up.Fd()), &st) != nil || uint64(st.Dev) != stack[len(stack)-1].dev || st.Ino != stack[len(stack)-1].ino {
				up.Close()
				return size, false // moved meanwhile: not where it came from
			}
			cur.Close()
			cur = up
			continue
		}
		name := l.subdirs[len(l.subdirs)-1]
		l.subdirs = l.subdirs[:len(l.subdirs)-1]
		sub, err := openDirAt(int(cur.Fd()), name)
		if err != nil {
			complete = false
			continue
		}
		next, ok := readLevel(sub, &budget, &size)
		if !ok {
			sub.Close()
			return size, false
		}
		complete = complete && next.complete
		cur.Close()
		cur = sub
		stack = append(stack, next)
	}
	return size, complete
}

// level is a directory Measure has read: its identity, to check the way
// back up, and the subdirectories still to visit.
type level struct {
	dev, ino uint64
	subdirs  []string
	complete bool
}

// readLevel reads the open directory f whole, adding each entry's disk
// use to *size; ok is false when the budget ran out.
func readLevel(f *os.File, budget *int, size *int64) (l level, ok bool) {
	dfd := int(f.Fd())
	var st unix.Stat_t
	if unix.Fstat(dfd, &st) != nil {
		return l, true
	}
	l.dev, l.ino, l.complete = uint64(st.Dev), st.Ino, true
	if st.Mode&0o700 != 0o700 {
		// No search (0600) hides its entries' sizes; make it the
		// owner's, through its own descriptor.
		_ = unix.Fchmod(dfd, 0o700)
	}
	for {
		names, err := f.Readdirnames(batch)
		if len(names) == 0 {
			if err != nil && err != io.EOF {
				l.complete = false // unreadable
			}
			return l, true
		}
		for _, n := range names {
			if *budget <= 0 {
				return l, false
			}
			*budget--
			switch err := unix.Fstatat(dfd, n, &st, unix.AT_SYMLINK_NOFOLLOW); err {
			case nil:
			case unix.ENOENT:
				continue // removed meanwhile
			default:
				l.complete = false
				continue
			}
			*size += int64(st.Blocks) * 512
			if st.Mode&unix.S_IFMT == unix.S_IFDIR {
				l.subdirs = append(l.subdirs, n)
			}
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
