//go:build unix

package venv

import "syscall"

// oNoFollow makes an open fail on a symbolic link in the last component,
// and never blocks: a FIFO planted where a file is read opens at once, and
// the regular-file check that follows refuses it.
const oNoFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
