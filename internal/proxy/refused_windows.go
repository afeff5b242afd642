package proxy

import (
	"errors"
	"syscall"
)

// wsaeconnrefused is WSAECONNREFUSED, which Windows returns where Unix
// returns ECONNREFUSED.
const wsaeconnrefused = syscall.Errno(10061)

// isRefusedOS reports Windows' form of "connection refused".
func isRefusedOS(err error) bool { return errors.Is(err, wsaeconnrefused) }
