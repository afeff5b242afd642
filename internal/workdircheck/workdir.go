// Package workdircheck says whether a place is acceptable to a sandbox
// before anything is created: a supplied working directory, a kept home
// (Config.Home), a grant, and none of them in moat's state directory. It
// refuses a place from which the sandbox could change what runs later on
// the host, outside the sandbox. Its errors are *Error, which package moat
// gives as a PlaceError.
package workdircheck

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/moat-sandbox/moat/internal/hostview"
	"github.com/moat-sandbox/moat/internal/paths"
)

// Error is a place refused. The zero value refuses nothing named.
type Error struct {
	// Subject is what was refused: "workdir", "home" or "grant".
	Subject string
	// Path is the path as the caller wrote it.
	Path string
	// Problem says why, in a few words.
	Problem string
	// Unsafe marks an unsafe working directory (moat.ErrUnsafeWorkDir).
	Unsafe bool
	// Setting is the id (internal/settings) of the setting Problem names
	// by its Config field, which the CLI names by its flag; "" for none.
	Setting string
}

// Error returns the one-line message, without moat's prefix.
func (e *Error) Error() string { return e.Subject + " " + strconv.Quote(e.Path) + ": " + e.Problem }

// pseudoDirs are the kernel's file systems: no working directory can live
// in them.
var pseudoDirs = []string{"/proc", "/sys", "/dev"}

// systemDirs may not be the working directory, nor lie inside it: a
// sandbox run as root would rewrite the system. Directories inside them
// (/opt/project, /var/tmp/job) are fine.
var systemDirs = []string{
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/boot", "/opt",
	"/var", "/run", "/srv", "/tmp", "/var/tmp", "/mnt", "/media",
}

// homeControl are places under a home from which files run, or are
// trusted, later and outside the sandbox: a working directory that is one
// of them or holds one is refused unless AllowHomeWorkDir. The home itself
// comes first, so the home and every directory above it (/home, /) are
// refused.
var homeControl = []string{
	"", ".local", ".local/bin", "bin", ".config", ".config/autostart", ".config/systemd",
	".config/environment.d", ".config/fish", ".config/git", ".local/share/applications",
	".local/share/systemd", ".bashrc.d", ".ssh", ".gnupg",
}

// WorkDir reports why dir cannot be a supplied working directory, or nil
// (moat.CheckWorkDir; the error is an *Error). dir is resolved first; one that does not exist is left to moat.New to
// report. It refuses the root, the kernel's pseudo file systems and the
// system directories, a directory the user cannot list or write, and,
// unless allowHome, a home directory, a directory holding one, one of the
// home's control places (~/.local/bin, ~/.config, ~/.ssh, ...) or a
// directory holding one, and one that holds a directory of PATH: all of
// them would let the sandbox change what runs later on the host.
func WorkDir(dir string, allowHome bool) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil
	}
	refuse := func(unsafe bool, format string, args ...any) error {
		msg := fmt.Sprintf(format, args...)
		return &Error{Subject: "workdir", Path: dir, Problem: msg, Unsafe: unsafe}
	}
	// lift is a refusal that AllowHomeWorkDir lifts, which it names.
	lift := func(format string, args ...any) error {
		e := refuse(true, format+"; pass Config.AllowHomeWorkDir to allow it", args...).(*Error)
		e.Setting = "workdir.allow-home"
		return e
	}
	if resolved == "/" {
		return refuse(true, "is the root directory: the working directory is writable, so it must be a directory of its own")
	}
	for _, p := range pseudoDirs {
		if paths.Under(resolved, p) {
			return refuse(true, "is in %s, a kernel file system, not a place to work in", p)
		}
	}
	for _, p := range systemDirs {
		if resolved == p {
			return refuse(true, "is the system directory %s: the working directory is writable, so use a directory of its own inside it", p)
		}
	}
	f, err := os.Open(resolved)
	if err != nil {
		return refuse(false, "cannot be opened: %v", paths.Bare(err))
	}
	_, err = f.Readdirnames(1)
	f.Close()
	if err != nil && err != io.EOF {
		return refuse(false, "cannot be listed: %v", paths.Bare(err))
	}
	if err := canWrite(resolved); err != nil {
		return refuse(false, "is not writable: %v", err)
	}
	if !allowHome {
		for _, h := range hostview.AllHomes(hostview.OwnHome()) {
			for _, rel := range homeControl {
				c := filepath.Join(h, rel)
				if !paths.Under(c, resolved) {
					continue
				}
				what := "the home directory " + h
				if rel != "" {
					what = c
				}
				if resolved == c {
					return lift("is %s, whose files run later outside the sandbox (shell rc files, ~/.local/bin)", what)
				}
				return lift("holds %s, whose files run later outside the sandbox (shell rc files, ~/.local/bin)", what)
			}
		}
		for _, p := range filepath.SplitList(os.Getenv("PATH")) {
			if !filepath.IsAbs(p) {
				continue
			}
			if r, err := filepath.EvalSymlinks(p); err == nil && paths.Under(r, resolved) {
				return lift("holds %s, a directory of PATH, whose programs run later outside the sandbox", p)
			}
		}
	}
	return nil
}

// Grants refuses grants that no policy can mean: the root directory,
// which would make the whole system the sandbox's. grants are the grants'
// paths as written.
func Grants(grants []string) error {
	for _, g := range grants {
		if g == "/" {
			return &Error{Subject: "grant", Path: g, Problem: "is the root directory; grant the directories the command needs instead"}
		}
	}
	return nil
}
