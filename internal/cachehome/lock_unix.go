//go:build unix

package cachehome

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// Supported says whether this platform keeps caches; elsewhere [Open]
// fails and the caller gives the run a throwaway home.
const Supported = true

// lockFile is a held lock: an flock on a file in the records directory.
type lockFile struct {
	f *os.File
}

// tryLock takes the lock at path without waiting: nil, nil when another
// holder has it. A lock file that a prune removed while this took it is
// detected (its inode no longer at path) and taken again.
func tryLock(path string) (*lockFile, error) {
	for range 5 {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
		if err != nil {
			return nil, err
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				return nil, nil
			}
			return nil, err
		}
		held, err1 := f.Stat()
		now, err2 := os.Lstat(path)
		if err1 == nil && err2 == nil && os.SameFile(held, now) {
			return &lockFile{f: f}, nil
		}
		f.Close()
	}
	return nil, errors.New("lock file keeps changing")
}

// release drops the lock.
func (l *lockFile) release() {
	if l != nil && l.f != nil {
		l.f.Close()
		l.f = nil
	}
}

// removeAndRelease unlinks the lock file while still holding it, then
// drops it; a run that opened the old file sees it moved and retries.
func (l *lockFile) removeAndRelease() {
	if l != nil && l.f != nil {
		os.Remove(l.f.Name())
		l.release()
	}
}

// openNoFollow opens path for reading without following a final link or
// blocking on a FIFO.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// ownedByMe reports whether fi belongs to this process's user.
func ownedByMe(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

// appendNoFollow opens path for appending (0600, made if missing), not
// through a link and without blocking.
func appendNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
}
