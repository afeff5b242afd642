package linux

import "golang.org/x/sys/unix"

// sysAccess is access(2), which this architecture has.
const sysAccess = unix.SYS_ACCESS
