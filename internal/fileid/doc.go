// Package fileid identifies files on the host: the device and inode of a
// path itself (not what a link there points to), so that a place checked
// once can be recognised again, and the hard-link count of a regular file.
// Where the system has no stat(2) the answers are zero, which means
// unchecked.
package fileid
