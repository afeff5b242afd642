// Package hostinput reads the files that moat acts on outside any sandbox
// (a config file, a policy document, a policy fragment, an interpreter or
// library moat runs or loads) and refuses one that a sandbox could have
// written.
//
// A file is suspect when any of these holds:
//   - it lies (once every link is followed) in a place that the sandbox
//     of the current run can write: a supplied working directory, a kept
//     home, a writable grant, everything at isolation permissive;
//   - it lies in a place that a sandbox of an earlier run could write.
//     [Store.RecordPlaces], called by every run that has such a place
//     before its command starts, keeps a marker per place in the user's
//     moat state directory, which no sandbox can read or write;
//   - the user may write it and it has other hard links, one of which
//     may be in such a place;
//   - it, or a directory on its way, can be written by another user (a
//     foreign owner, or write permission for others or for a group other
//     than the user's primary one, without the sticky bit).
//
// A suspect file is refused unless the user pinned its exact content with
// "moat trust FILE" ([Store.Trust]): the pin is the file's real path and
// the SHA-256 of its bytes, checked on the bytes actually read, so a later
// rewrite by a sandbox is refused again. A symbolic link on the way that
// lies in such a place is refused outright: a sandbox could point it at
// another file.
//
// The file is opened once, without following a link in its last
// component and without blocking on a FIFO; every check but the path's is
// made on the opened descriptor, the real path is the kernel's name for
// that descriptor where it gives one (/proc/self/fd on Linux), and the
// bytes read are bounded.
package hostinput
