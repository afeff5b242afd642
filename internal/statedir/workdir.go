package statedir

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/moat-sandbox/moat/internal/paths"
)

// NewWorkDir creates sandbox id's automatic working directory next to its
// state directory (see the sweep, which removes both together), and
// returns it fully resolved. On error nothing is left behind.
func NewWorkDir(state, id string) (string, error) {
	dir, err := os.MkdirTemp(filepath.Dir(state), "moat-"+id+"-")
	if err != nil {
		return "", fmt.Errorf("workdir: %w", err)
	}
	resolved, err := filepath.EvalSymlinks(dir)
	if err != nil {
		_ = RemoveAll(dir)
		return "", fmt.Errorf("workdir %q: %w", dir, err)
	}
	return resolved, nil
}

// ResolveWorkDir checks a supplied working directory and returns it
// absolute and fully resolved, since the kernel enforces rules on what a
// path resolves to.
func ResolveWorkDir(requested string) (string, error) {
	dir, err := filepath.Abs(requested)
	if err != nil {
		return "", fmt.Errorf("workdir %q: %w", requested, err)
	}
	resolved, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("workdir %q: %w", requested, paths.Bare(err))
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return "", fmt.Errorf("workdir %q: %w", requested, paths.Bare(err))
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("workdir %q: not a directory", requested)
	}
	return resolved, nil
}
