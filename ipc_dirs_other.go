//go:build !unix

package moat

// ipcBases is empty where there is no per-user runtime directory to
// prefer.
func ipcBases() []string { return nil }

// sweepIPCOnce has nothing to sweep where ipcBases is empty.
func sweepIPCOnce(string) {}

// userCanReplace reports whether this user may write path; elsewhere than
// Unix, IPC is not served, so nothing is replaceable through it.
func userCanReplace(string) bool { return false }
