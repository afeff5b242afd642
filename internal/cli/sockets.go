package cli

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// socketPaths resolves the --allow-socket paths the way grants are: made
// absolute, with the links of the user's own spelling followed, and each
// must name an existing Unix socket (a usage error otherwise).
func socketPaths(in []string) ([]string, error) {
	var out []string
	for _, p := range in {
		abs, err := filepath.Abs(p)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err == nil {
			var fi fs.FileInfo
			if fi, err = os.Stat(abs); err == nil && fi.Mode()&fs.ModeSocket == 0 {
				return nil, usagef("--allow-socket %q: not a Unix socket", p)
			}
		}
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return nil, usagef("--allow-socket %q: %v", p, err)
		}
		out = append(out, abs)
	}
	return out, nil
}
