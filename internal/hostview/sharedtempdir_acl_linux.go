package hostview

import (
	"errors"

	"golang.org/x/sys/unix"
)

// hasACL reports whether the entry at p carries a POSIX access ACL, which
// can give a user write access that its owner, group and mode bits do not
// show (setfacl -m u:NAME:rwx). A minimal ACL, one the mode bits say all
// of, is not stored, so any stored one counts. An entry that cannot be
// asked counts as having one: fail closed.
func hasACL(p string) bool {
	_, err := unix.Lgetxattr(p, "system.posix_acl_access", nil)
	switch {
	case err == nil:
		return true
	case errors.Is(err, unix.ENODATA), errors.Is(err, unix.EOPNOTSUPP):
		return false
	}
	return true
}
