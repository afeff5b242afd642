//go:build !unix

package pysandbox

// Lock does nothing where there is no flock: concurrent Creates of one
// cached venv may both install.
func Lock(string) (func(), error) { return func() {}, nil }
