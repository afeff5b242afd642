package statedir

import (
	"fmt"
	"path/filepath"
)

// Dirs are one sandbox's host directories, all absolute and fully
// resolved: its working directory, its state directory (private temp,
// private home) and the home supplied by Config.Home. The zero value is a
// sandbox with none of them yet.
type Dirs struct {
	// Work is the working directory; "" before it is made or checked.
	Work string
	// Auto says Work is an automatic one, removed with the sandbox.
	Auto bool
	// State is the sandbox's own 0700 state directory holding its private
	// temp and home; removed by Remove. "" until created.
	State string
	// Home is Config.Home, resolved; "" for a fresh private home.
	Home string
}

// Tmp is the host directory that is the sandbox's /tmp (and TMPDIR); ""
// before the state directory exists.
func (d Dirs) Tmp() string { return Sub(d.State, TmpName) }

// VarTmp is the host directory that is the sandbox's /var/tmp.
func (d Dirs) VarTmp() string { return Sub(d.State, VarTmpName) }

// PrivateHome is the sandbox's HOME, at the same path inside as on the
// host: the supplied Home, or a fresh one in the state directory.
func (d Dirs) PrivateHome() string {
	if d.Home != "" {
		return d.Home
	}
	return Sub(d.State, HomeName)
}

// PrivateRoots are the per-sandbox host directories (private temp,
// private home, build scratch: the state directory and a supplied home)
// that the sandbox writes besides its working directory and grants, then
// extra (its kept cache stores). They count against the disk limit.
func (d Dirs) PrivateRoots(extra []string) []string {
	var out []string
	if d.State != "" {
		out = append(out, d.State)
	}
	if d.Home != "" {
		out = append(out, d.Home)
	}
	return append(out, extra...)
}

// CommandDir is a command's working directory: the sandbox's working
// directory, or dir relative to it.
func (d Dirs) CommandDir(dir string) string {
	if dir == "" {
		return d.Work
	}
	if filepath.IsAbs(dir) {
		return filepath.Clean(dir)
	}
	return filepath.Join(d.Work, dir)
}

// Remove removes the automatic working directory, then the state
// directory. In that order: the state directory's owner marker is what
// lets a later sweep remove an automatic working directory that a crash
// left behind, so it goes last, and stays when the working directory
// could not be removed.
func (d *Dirs) Remove() error {
	if d.Auto && d.Work != "" {
		if err := RemoveAll(d.Work); err != nil {
			return fmt.Errorf("workdir %q: %w", d.Work, err)
		}
	}
	if err := RemoveState(d.State); err != nil {
		return err
	}
	d.State = ""
	return nil
}
