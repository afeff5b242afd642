package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/fileserve"
	"github.com/moat-sandbox/moat/internal/hostview"
	"github.com/moat-sandbox/moat/internal/ipchost"
	"github.com/moat-sandbox/moat/internal/paths"
)

// GrantSelf lets a session's sandbox run this program's binary, its file
// server (see [StartFiles]): a READ|EXEC grant of the binary file alone,
// added to cfg before moat.New. It refuses a binary the sandbox could
// write (in its working directory, kept home or a writable grant, or one
// the user may replace under the permissive level, which writes nearly
// everything the user may): the sandbox would change the program that
// the next session runs.
func GrantSelf(cfg *moat.Config) error {
	bin, err := selfBinary()
	if err != nil {
		return err
	}
	var writable []string
	for _, p := range []string{cfg.WorkDir, cfg.Home} {
		if p != "" {
			writable = append(writable, p)
		}
	}
	for _, g := range cfg.Grants {
		if g.Access.CanWrite() {
			writable = append(writable, g.Path)
		}
	}
	if paths.UnderAny(bin, writable) {
		return fmt.Errorf("file API: this program's binary %q lies where the sandbox writes; it would run it as its file server, so it could replace it: install it elsewhere", bin)
	}
	if cfg.Isolation == moat.IsolationPermissive && !paths.UnderAny(bin, hostview.SharedTempDirs) && ipchost.UserCanReplace(bin) {
		return fmt.Errorf("file API: this program's binary %q is one the user may replace, and the permissive level lets the sandbox write nearly everything the user may: use the default or strict level, or install the program where the user cannot write", bin)
	}
	cfg.Grants = append(slices.Clip(cfg.Grants), moat.Grant{Path: bin, Access: moat.READ | moat.EXEC})
	return nil
}

// selfBinary is this program's binary, every link resolved.
func selfBinary() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("file API: this program's binary: %w", err)
	}
	r, err := filepath.EvalSymlinks(exe)
	if err != nil {
		return "", fmt.Errorf("file API: this program's binary %q: %w", exe, paths.Bare(err))
	}
	return r, nil
}

// checkServerBinary refuses to run bin as the file server where a served
// writable place holds it, or where it is not a regular file.
func checkServerBinary(bin string, places []fileserve.Place) error {
	fi, err := os.Stat(bin)
	if err != nil {
		return fmt.Errorf("this program's binary %q: %w", bin, paths.Bare(err))
	}
	if !fi.Mode().IsRegular() {
		return errors.New("this program's binary is not a regular file")
	}
	for _, p := range places {
		if p.Writable && paths.Under(bin, p.Path) {
			return fmt.Errorf("this program's binary %q lies in %q, which the sandbox writes: install it elsewhere", bin, p.Path)
		}
	}
	return nil
}
