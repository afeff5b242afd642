package gitguard

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// openDirNoFollow opens the directory rel inside place w, one component
// at a time, refusing a link at every step.
func openDirNoFollow(w, rel string) (int, error) {
	fd, err := unix.Open(w, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: w, Err: err}
	}
	if rel == "." || rel == "" {
		return fd, nil
	}
	for _, name := range strings.Split(rel, "/") {
		next, err := unix.Openat(fd, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return -1, &os.PathError{Op: "open", Path: filepath.Join(w, rel), Err: err}
		}
		fd = next
	}
	return fd, nil
}

// openParent opens the directory holding p (inside place w) without
// following links, and returns it with p's last component.
func openParent(w, p string) (int, string, error) {
	rel, err := filepath.Rel(w, p)
	if err != nil {
		return -1, "", err
	}
	fd, err := openDirNoFollow(w, filepath.Dir(rel))
	return fd, filepath.Base(rel), err
}

// renameNoFollow renames rel (inside place w) to newName in the same
// directory, without following links on the way and without replacing
// an existing entry.
func renameNoFollow(w, rel, newName string) error {
	fd, err := openDirNoFollow(w, filepath.Dir(rel))
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	base := filepath.Base(rel)
	if err := unix.Renameat2(fd, base, fd, newName, unix.RENAME_NOREPLACE); err != nil {
		return &os.LinkError{Op: "rename", Old: filepath.Join(w, rel), New: newName, Err: err}
	}
	return nil
}

// restoreFile creates p (inside place w) afresh with perm and content,
// failing if anything is there.
func restoreFile(w, p string, perm os.FileMode, content []byte) error {
	dfd, base, err := openParent(w, p)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	fd, err := unix.Openat(dfd, base, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm))
	if err != nil {
		return &os.PathError{Op: "create", Path: p, Err: err}
	}
	f := os.NewFile(uintptr(fd), p)
	_, err = f.Write(content)
	if err == nil {
		err = f.Chmod(perm) // the umask may have cut it
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// openNoFollow opens p for reading, refusing a link in its last component.
func openNoFollow(p string) (*os.File, error) {
	return os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// changeTime is fi's inode change time, which no unprivileged process can
// set back.
func changeTime(fi os.FileInfo) (time.Time, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return time.Time{}, false
	}
	return time.Unix(st.Ctim.Sec, st.Ctim.Nsec), true
}

func isExist(err error) bool { return errors.Is(err, unix.EEXIST) || errors.Is(err, os.ErrExist) }

// restoreLink makes p (inside place w) a symbolic link to target again,
// failing if anything is there.
func restoreLink(w, p, target string) error {
	dfd, base, err := openParent(w, p)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	if err := unix.Symlinkat(target, dfd, base); err != nil {
		return &os.LinkError{Op: "symlink", Old: target, New: p, Err: err}
	}
	return nil
}

// makeReadable adds the owner's rwx to dir when it is a directory (not a
// link) that this user owns, and reports whether it did.
func makeReadable(dir string) bool {
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Geteuid() {
		return false
	}
	return unix.Fchmodat(unix.AT_FDCWD, dir, (st.Mode&0o7777)|0o700, unix.AT_SYMLINK_NOFOLLOW) == nil ||
		unix.Chmod(dir, (st.Mode&0o7777)|0o700) == nil
}

// inodeKey names fi's inode by device and number; ok is false where the
// platform does not say.
func inodeKey(fi os.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}, true
}

// openDirEntries opens dir to list it, refusing a link in its last
// component.
func openDirEntries(dir string) (*os.File, error) {
	return os.OpenFile(dir, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_DIRECTORY, 0)
}

// statPrint is fi's stat fingerprint; ok is false where the platform does
// not say. Its change time is one no unprivileged process can set.
func statPrint(fi os.FileInfo) (fingerprint, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fingerprint{}, false
	}
	return fingerprint{
		dev: uint64(st.Dev), ino: uint64(st.Ino), mode: uint32(st.Mode), size: st.Size,
		mtime: st.Mtim.Sec*1e9 + st.Mtim.Nsec, ctime: st.Ctim.Sec*1e9 + st.Ctim.Nsec,
	}, true
}
