//go:build !unix

package moat

// lockVenv does nothing where there is no flock: concurrent Creates of
// one cached venv may both install.
func lockVenv(string) (func(), error) { return func() {}, nil }
