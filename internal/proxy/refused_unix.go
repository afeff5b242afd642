//go:build !windows

package proxy

// isRefusedOS reports OS-specific forms of "connection refused"; on Unix
// syscall.ECONNREFUSED already covers them.
func isRefusedOS(error) bool { return false }
