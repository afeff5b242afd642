//go:build !linux

package moat

// The host facts that defaults and the disk limit need; without a
// backend they are fixed guesses.

// defaultMemoryBytes is 8 GiB here.
func defaultMemoryBytes() int64 { return 8 << 30 }

// defaultOpenFiles is def (DefaultOpenFiles) here.
func defaultOpenFiles(def int64) int64 { return def }

// exited cannot tell here: it says yes.
func exited(int) bool { return true }

// freeBytes is unknown here.
func freeBytes(string) (int64, error) { return 0, errUnsupportedOS }
