//go:build !linux && !darwin && !freebsd && !netbsd

package cachehome

// Identify returns [ErrNoIdentity]: moat does not read a directory's
// birth here, so no run keeps caches.
func Identify(string) (Project, error) { return Project{}, ErrNoIdentity }
