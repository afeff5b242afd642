package hostview

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// aclGivingWrite is a POSIX access ACL (the kernel's xattr form) that
// gives uid rwx beside mode 0644's owner, group and other entries.
func aclGivingWrite(uid int) []byte {
	type entry struct {
		tag, perm uint16
		id        uint32
	}
	const undefined = 0xffffffff
	entries := []entry{
		{0x01, 6, undefined},   // user::rw-
		{0x02, 7, uint32(uid)}, // user:UID:rwx
		{0x04, 4, undefined},   // group::r--
		{0x10, 7, undefined},   // mask::rwx
		{0x20, 4, undefined},   // other::r--
	}
	b := binary.LittleEndian.AppendUint32(nil, 2) // POSIX_ACL_XATTR_VERSION
	for _, e := range entries {
		b = binary.LittleEndian.AppendUint16(b, e.tag)
		b = binary.LittleEndian.AppendUint16(b, e.perm)
		b = binary.LittleEndian.AppendUint32(b, e.id)
	}
	return b
}

// TestSharedTempDirACL: a file whose mode bits say only its owner may
// write it, but whose ACL gives the sandbox's user write access, keeps
// the directory from being shown; the same tree without the ACL (the
// control) is shown. The kernel, not a mock, says whether the ACL holds.
func TestSharedTempDirACL(t *testing.T) {
	defer func(old int) { adminUID = old }(adminUID)
	adminUID = os.Getuid()
	other := Owner{UID: os.Getuid() + 4242}
	for _, tc := range []struct {
		name    string
		on      string // "file" or "dir": where the ACL goes; "" for none
		wantWhy string
	}{
		{name: "control: no ACL", on: ""},
		{name: "a file with an ACL", on: "file", wantWhy: "has an ACL"},
		// The ACL's mask shows as the group bits, which the mode check
		// refuses first.
		{name: "the directory with an ACL", on: "dir", wantWhy: "only root can write"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			temp := t.TempDir()
			d := filepath.Join(temp, "data")
			mkdir(t, d, 0o755)
			f := filepath.Join(d, "f")
			write(t, f, 0o644)
			target := map[string]string{"file": f, "dir": d}[tc.on]
			if target != "" {
				if err := unix.Setxattr(target, "system.posix_acl_access", aclGivingWrite(other.UID), 0); err != nil {
					t.Fatalf("PRECONDITION: this file system takes no POSIX ACL on %s: %v", target, err)
				}
				if _, err := unix.Getxattr(target, "system.posix_acl_access", nil); err != nil {
					t.Fatalf("the ACL did not hold: %v", err)
				}
			}
			err := SharedTempDir(d, temp, other)
			switch {
			case tc.wantWhy == "" && err != nil:
				t.Fatalf("control: the tree without an ACL is refused: %v", err)
			case tc.wantWhy != "" && (err == nil || !strings.Contains(err.Error(), tc.wantWhy)):
				t.Fatalf("an ACL that gives the sandbox's user write access: got %v, want %q", err, tc.wantWhy)
			}
		})
	}
}
