//go:build !unix

package cli

import "os"

// openForWriting reports whether f may be written through; without
// F_GETFL it answers false and readOnlyStdin relies on its other checks.
func openForWriting(f *os.File) bool { return false }
