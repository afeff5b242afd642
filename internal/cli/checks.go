package cli

import (
	"errors"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/policy"
)

// checkInputs refuses, as usage errors naming the flag, the working
// directories, grants and limits that moat.New would refuse or fail on, so
// that nothing is created for them: a workdir moat.CheckWorkDir refuses
// (the root, /proc, a home without --allow-home-workdir, one the user
// cannot open), a grant of the root directory, and too few open files.
func (f *sandboxFlags) checkInputs(res *policy.Result) error {
	if res.WorkDir != "" {
		if err := moat.CheckWorkDir(res.WorkDir, f.allowHomeWorkDir); err != nil {
			return placeUsage(res.Describe("workdir.path"), res.WorkDir, err)
		}
	}
	for _, g := range res.Grants {
		p := g.Path
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		if p == "/" {
			return usagef("--grant %q: is the root directory; grant the directories the command needs instead", g.Path)
		}
	}
	if n := res.Config.Limits.OpenFiles; n > 0 && n < moat.MinOpenFiles {
		return usagef("%s %d: too few for the sandbox's helper and the command's standard streams; want at least %d", res.Describe("limits.max-open-files"), n, moat.MinOpenFiles)
	}
	return nil
}

// placeUsage turns a *moat.PlaceError into a usage error that names flag
// (or the config key) instead of the library's subject.
func placeUsage(flag, path string, err error) error {
	var pe *moat.PlaceError
	if errors.As(err, &pe) {
		return usagef("%s %q: %s", flag, path, pe.Problem)
	}
	return usagef("%s %q: %s", flag, path, trimMoat(err))
}

// resolveError is a moat.ResolvePaths error as a usage error that names
// the flag: `--grant "/nonexistent": no such file or directory`. The
// library names a path it could not resolve "path"; it is the working
// directory when it is spelled as workDir, a grant otherwise.
func resolveError(err error, workDir string) error {
	msg := trimMoat(err)
	if rest, ok := strings.CutPrefix(msg, "path "); ok {
		flag := "--grant "
		if workDir != "" && strings.HasPrefix(rest, strconv.Quote(workDir)+":") {
			flag = "--workdir "
		}
		return usagef("%s%s", flag, rest)
	}
	for _, s := range []struct{ subject, flag string }{{"grant ", "--grant "}, {"workdir ", "--workdir "}} {
		if rest, ok := strings.CutPrefix(msg, s.subject); ok {
			return usagef("%s%s", s.flag, rest)
		}
	}
	return usagef("%s", msg)
}
