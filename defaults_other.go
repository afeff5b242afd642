//go:build !linux

package moat

// The host facts that defaults and the disk limit need; without a
// backend they are fixed guesses.

// defaultMemoryBytes is 8 GiB here.
func defaultMemoryBytes() int64 { return 8 << 30 }

// defaultOpenFiles is DefaultOpenFiles here.
func defaultOpenFiles() int64 { return DefaultOpenFiles }

// exited cannot tell here: it says yes.
func exited(int) bool { return true }

// freeBytes is unknown here.
func freeBytes(string) (int64, error) { return 0, errUnsupportedOS }
