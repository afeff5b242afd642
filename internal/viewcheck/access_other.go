//go:build !unix

package viewcheck

// hostWritable reports true: where access(2) is missing, the sandbox's
// view alone decides.
func hostWritable(string) bool { return true }
