//go:build unix

package venv

import "syscall"

// oNoFollow makes an open fail on a symbolic link in the last component.
const oNoFollow = syscall.O_NOFOLLOW
