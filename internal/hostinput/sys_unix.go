//go:build unix

package hostinput

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// openNoFollow opens p for reading without following a link in its last
// component and without blocking on a FIFO.
func openNoFollow(p string) (*os.File, error) {
	return os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
}

// fileID is a file's identity.
type fileID struct{ dev, ino uint64 }

// idOf returns the identity of the file at p, links followed.
func idOf(p string) (fileID, bool) {
	var st syscall.Stat_t
	if syscall.Stat(p, &st) != nil {
		return fileID{}, false
	}
	return fileID{uint64(st.Dev), uint64(st.Ino)}, true
}

// ownedByMe reports whether fi belongs to the effective user.
func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

// privateDir checks that d is a directory of the user's own, not a link,
// that nobody else may enter.
func privateDir(d string) error {
	fi, err := os.Lstat(d)
	if err != nil {
		return err
	}
	if !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 || !ownedByMe(fi) {
		return fmt.Errorf("not a private directory of yours (want mode 0700, owned by uid %d)", os.Geteuid())
	}
	return nil
}

// othersMayWrite returns why someone other than the user, or a sandbox
// through another name, may write the regular file fi (opened at path
// real), or "".
func othersMayWrite(fi fs.FileInfo, real string) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "its owner cannot be told"
	}
	me := uint32(os.Geteuid())
	switch {
	case st.Uid != me && st.Uid != 0:
		return fmt.Sprintf("it belongs to another user (uid %d)", st.Uid)
	case fi.Mode().Perm()&0o002 != 0:
		return "every user may write it"
	case fi.Mode().Perm()&0o020 != 0 && st.Gid != uint32(os.Getegid()):
		return fmt.Sprintf("the group %d may write it", st.Gid)
	case st.Uid == me && st.Nlink > 1:
		return fmt.Sprintf("it has %d hard links, and a sandbox may be able to write another of them", st.Nlink)
	}
	return ""
}

// othersMayWriteDir returns why someone other than the user may change
// the entries of the directory fi, or "".
func othersMayWriteDir(fi fs.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "has an owner that cannot be told"
	}
	me := uint32(os.Geteuid())
	sticky := fi.Mode()&fs.ModeSticky != 0
	switch {
	case st.Uid != me && st.Uid != 0:
		return fmt.Sprintf("belongs to another user (uid %d)", st.Uid)
	case !sticky && fi.Mode().Perm()&0o002 != 0:
		return "may be written by every user"
	case !sticky && fi.Mode().Perm()&0o020 != 0 && st.Gid != uint32(os.Getegid()):
		return fmt.Sprintf("may be written by the group %d", st.Gid)
	}
	return ""
}

// mayWrite reports whether the user may write p, by access(2).
func mayWrite(p string) bool {
	const wOK = 0x2
	return syscall.Access(p, wOK) == nil
}
