//go:build unix

package quarantine

import "syscall"

// oNoFollow opens no link and never blocks on a FIFO.
const oNoFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
