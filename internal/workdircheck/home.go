package workdircheck

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/moat-sandbox/moat/internal/hostview"
	"github.com/moat-sandbox/moat/internal/paths"
	"github.com/moat-sandbox/moat/internal/statedir"
)

// Home checks dir as moat.CheckHome does and returns it resolved: dir
// must be an existing directory of the user's, and not a place whose files
// run or are trusted later outside the sandbox: the user's real home, a
// directory holding it, ~/.local/bin, ~/.config and the like, a directory
// holding one of PATH's (the rules of WorkDir without allowHome), nor one
// holding what toolchains(home) names under the user's home.
func Home(dir string, toolchains func(home string) []string) (string, error) {
	refuse := func(problem string) error {
		e := &Error{Subject: "home", Path: dir, Problem: problem}
		if strings.Contains(problem, "Config.Home") {
			e.Setting = "home"
		}
		return e
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", refuse(err.Error())
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", refuse(paths.Bare(err).Error() + "; Config.Home must be an existing directory")
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return "", refuse(paths.Bare(err).Error())
	}
	if !fi.IsDir() {
		return "", refuse("not a directory; Config.Home must be an existing directory")
	}
	if uid, ok := statedir.FileOwner(fi); ok && uid != os.Getuid() {
		return "", refuse("belongs to another user; Config.Home must be a directory of your own")
	}
	if err := WorkDir(resolved, false); err != nil {
		var pe *Error
		if !errors.As(err, &pe) {
			return "", err
		}
		problem, _, _ := strings.Cut(pe.Problem, "; pass Config.AllowHomeWorkDir")
		return "", refuse(problem + "; Config.Home must be a directory of its own for the sandbox, not your real home or a place in it that runs later")
	}
	// Writable for the sandbox, it must not hold what the host's own
	// toolchains read and run: a build cache, a package cache, ~/.cargo.
	if h := hostview.OwnHome(); h != "" {
		for _, p := range toolchains(h) {
			if paths.Under(p, resolved) {
				if _, err := os.Lstat(p); err == nil {
					return "", refuse("holds " + p + ", which the host's own tools read and run; Config.Home must be a directory of its own for the sandbox")
				}
			}
		}
	}
	return resolved, nil
}

// HomeConfig checks Config.Home as Home does, and against the working
// directory workDir, and returns it resolved; "" when none is supplied.
func HomeConfig(home, workDir string, toolchains func(home string) []string) (string, error) {
	if home == "" {
		return "", nil
	}
	resolved, err := Home(home, toolchains)
	if err != nil {
		return "", err
	}
	if workDir != "" {
		if abs, err := filepath.Abs(workDir); err == nil {
			if wd, err := filepath.EvalSymlinks(abs); err == nil && (paths.Under(resolved, wd) || paths.Under(wd, resolved)) {
				return "", &Error{Subject: "home", Path: home, Problem: "overlaps the working directory " + workDir + "; Config.Home keeps caches out of the project, so it must lie outside it", Setting: "home"}
			}
		}
	}
	return resolved, nil
}
