package linux

import (
	"os"
	"path/filepath"
)

// SweepDenyGuard removes, at the denied path d, the placeholder markers
// of runs whose process is dead, and d itself when that emptied it; it
// reports whether d is gone now. Anything else is left alone. moat's run
// journal calls it for each denied path of a run that died before Close.
func SweepDenyGuard(d string) bool {
	if _, err := os.Lstat(d); err != nil {
		return false
	}
	sweepDenyGuard(d)
	_, err := os.Lstat(d)
	return os.IsNotExist(err)
}

// SweepGitPlaceholders removes the hooks and config placeholders in the
// repository g that a run whose process is dead left, and returns the
// paths it removed.
func SweepGitPlaceholders(g string) []string {
	var before []string
	for _, n := range []string{"hooks", "config"} {
		if _, err := os.Lstat(filepath.Join(g, n)); err == nil {
			before = append(before, filepath.Join(g, n))
		}
	}
	sweepPlaceholders(g)
	var out []string
	for _, p := range before {
		if _, err := os.Lstat(p); os.IsNotExist(err) {
			out = append(out, p)
		}
	}
	return out
}
