//go:build unix

package viewcheck

import "golang.org/x/sys/unix"

// hostWritable reports whether the user running moat may write p on the
// host: a place the host user cannot write is no refusal of the sandbox's.
func hostWritable(p string) bool { return unix.Access(p, unix.W_OK) == nil }
