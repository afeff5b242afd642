// Package hostiletree measures and removes directory trees that a sandbox
// wrote: hostile input, shaped to make the host fail or hang. A sandbox can
// leave directories its owner cannot write, read or search (0500, 0000,
// 0100) at any depth, chains deeper than PATH_MAX, FIFOs, sockets, links
// and millions of entries; os.RemoveAll stops at the first of the
// unwritable directories.
//
// Every walk here is descriptor-relative (openat, unlinkat), never follows
// a link, opens nothing but directories (O_DIRECTORY|O_NOFOLLOW|O_NONBLOCK),
// makes a directory its owner's (0700, through the directory's own
// descriptor or an O_PATH one) before it opens or empties it, holds at most
// a fixed number of directories open (a deeper one is moved up into the
// trash and removed from there), and spends a work budget counted in
// directory entries: a removal that runs out of it stops, and the next call
// goes on where it stopped.
//
// A caller retires a tree with [Retire] (one rename into its trash, so
// nothing sees the tree half removed) and then empties the trash with
// [EmptyTrash], now or later. Package cachehome removes the cache stores
// it keeps this way, and package quarantine the entries of the quarantine.
package hostiletree
