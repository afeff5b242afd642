package moat

import "strconv"

// checkDiskPlatform refuses a disk or inode limit on Windows, where the
// disk watch cannot sample free space yet: a limit that cannot be
// measured is refused, not left unenforced. Zero (the default, which is
// no limit here) and negative (unlimited) pass.
func checkDiskPlatform(l Limits) error {
	switch {
	case l.DiskBytes > 0:
		return &UnsupportedSettingError{Platform: "windows", Setting: "disk limit", Value: strconv.FormatInt(l.DiskBytes, 10), Reason: "the disk watch cannot measure free space here yet; leave the limit out or set it unlimited"}
	case l.DiskInodes > 0:
		return &UnsupportedSettingError{Platform: "windows", Setting: "disk inode limit", Value: strconv.FormatInt(l.DiskInodes, 10), Reason: "the disk watch cannot measure free inodes here yet; leave the limit out or set it unlimited"}
	}
	return nil
}
