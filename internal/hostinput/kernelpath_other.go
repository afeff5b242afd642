//go:build !linux

package hostinput

import "os"

// kernelPath returns "": the path resolved before the open stands.
func kernelPath(*os.File) string { return "" }
