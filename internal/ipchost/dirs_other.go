//go:build !unix

package ipchost

// bases is empty where there is no per-user runtime directory to
// prefer.
func bases() []string { return nil }

// sweepOnce has nothing to sweep where bases is empty.
func sweepOnce(string) {}

// UserCanReplace reports whether this user may write path; elsewhere than
// Unix, IPC is not served, so nothing is replaceable through it.
func UserCanReplace(string) bool { return false }
