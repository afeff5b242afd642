//go:build unix && !linux

package hostiletree

import "golang.org/x/sys/unix"

// chmodDirNoFollow makes the directory name in dfd 0700 without following
// a link.
func chmodDirNoFollow(dfd int, name string) error {
	return unix.Fchmodat(dfd, name, 0o700, unix.AT_SYMLINK_NOFOLLOW)
}
