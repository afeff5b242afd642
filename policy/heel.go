package policy

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// heel's spellings that the config file (and the flags) accept besides
// moat's own. Each means exactly what moat's name means.
const (
	// NetworkAllow is heel's name for [NetworkAllowAll].
	NetworkAllow = "allow"
)

// keychainAlias refuses [security] with both heel's protect-keychain and
// moat's protect-keychains: one switch set twice, perhaps two ways.
func (c *checker) keychainAlias(raw *rawSecurity) error {
	if raw.ProtectKeychain != nil && raw.ProtectKeychains != nil {
		return c.fail([]string{"security", "protect-keychain"}, "security.protect-keychain: given with security.protect-keychains, which names the same switch")
	}
	return nil
}

// optBool checks an optional boolean; absent gives nil.
func (c *checker) optBool(path []string, v any) (*bool, error) {
	if v == nil {
		return nil, nil
	}
	b, ok := v.(bool)
	if !ok {
		return nil, c.fail(path, "%s: want true or false, not %s", strings.Join(path, "."), typeName(v))
	}
	return &b, nil
}

// madeWorkDir is what [Result.Resolve] created for the working directory:
// the directories of a supplied one that did not exist (heel creates
// them), or a fresh one made to be kept. Unless done, undo removes them
// again, so that a Resolve that fails leaves nothing behind.
type madeWorkDir struct {
	dirs []string // created, outermost first
	kept string   // the fresh directory made for KeepWorkDir, or ""
	done bool
}

// makeWorkDir creates r's working directory where it is missing (every
// missing directory on the way, 0700), or, with KeepWorkDir and none
// given, a fresh 0700 one in the system temp directory, which r then
// names. What exists already is left to Resolve's checks.
func (r *Result) makeWorkDir() (*madeWorkDir, error) {
	m := &madeWorkDir{}
	if r.WorkDir == "" {
		if !r.KeepWorkDir {
			return m, nil
		}
		dir, err := os.MkdirTemp("", "moat-kept-")
		if err != nil {
			return m, fmt.Errorf("%s: cannot create a working directory to keep: %w", r.Describe("workdir.keep"), unwrapPath(err))
		}
		m.dirs, m.kept = []string{dir}, dir
		r.WorkDir = dir
		return m, nil
	}
	abs, err := filepath.Abs(r.WorkDir)
	if err != nil {
		return m, fmt.Errorf("%s %q: %w", r.Describe("workdir.path"), r.WorkDir, err)
	}
	var missing []string
	for p := abs; ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return m, nil // Resolve's own stat names the problem
		}
		missing = append([]string{p}, missing...)
		if filepath.Dir(p) == p {
			break
		}
	}
	for _, d := range missing {
		if err := os.Mkdir(d, 0o700); err != nil {
			m.undo()
			return &madeWorkDir{}, fmt.Errorf("%s %q: %w", r.Describe("workdir.path"), r.WorkDir, unwrapPath(err))
		}
		m.dirs = append(m.dirs, d)
	}
	return m, nil
}

// undo removes what makeWorkDir created, innermost first, unless keep was
// called; a directory that is no longer empty stays.
func (m *madeWorkDir) undo() {
	if m.done {
		return
	}
	for i := len(m.dirs) - 1; i >= 0; i-- {
		os.Remove(m.dirs[i])
	}
	m.dirs = nil
}

// keep marks what makeWorkDir created as the sandbox's, to stay.
func (m *madeWorkDir) keep() { m.done = true }

// StdinName is how a config file read from standard input (--config -)
// is named in errors; its relative paths are relative to the current
// directory.
const StdinName = "<stdin>"

// LoadFrom reads and checks a config file from r, named name (relative
// paths are relative to name's directory), as [Load] does a path: at most
// 256 KiB, every mistake an [*Error].
func LoadFrom(name string, r io.Reader) (*File, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxFileSize+1))
	if err != nil {
		return nil, &Error{File: name, Err: unwrapPath(err)}
	}
	if len(data) > maxFileSize {
		return nil, &Error{File: name, Err: errors.New("larger than 256 KiB")}
	}
	return Parse(name, data)
}
