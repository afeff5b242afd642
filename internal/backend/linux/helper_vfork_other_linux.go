//go:build !amd64 && !arm64

package linux

import "syscall"

// haveVfork: no rawVfork here; commands are forked (rawClone).
const haveVfork = false

func rawVforkExec(*execArgs) (int, syscall.Errno) { return 0, syscall.ENOSYS }
