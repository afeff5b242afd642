// Package homecontrol lists the entries of a home directory that make the
// user's own tools run code later, outside any sandbox: the shells' start-up
// files, the desktop's autostart entries, systemd's user units, the
// directories of PATH, git's global configuration, editors' start-up files,
// and the home's rows of the control-file table (internal/controlfiles).
// moat exec keeps them read-only, and their creation blocked, even where a
// broad writable pattern (writable: ["~"]) covers them, unless a pattern
// names one exactly.
package homecontrol

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/moat-sandbox/moat/internal/controlfiles"
)

// Names are the entries, relative to the home with "/" separators, that
// run code or decide what runs. A directory covers what it holds.
var Names = []string{
	// Shells: rc files, profiles, login and logout scripts, and the
	// directories some distributions source.
	".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".bash_aliases", ".bashrc.d",
	".profile", ".zshrc", ".zprofile", ".zshenv", ".zlogin", ".zlogout", ".zshrc.d", ".oh-my-zsh",
	".cshrc", ".tcshrc", ".login", ".logout", ".kshrc", ".mkshrc", ".inputrc",
	".config/fish", ".config/nushell", ".config/environment.d", ".pam_environment",
	// X and desktop sessions.
	".xprofile", ".xinitrc", ".xsession", ".xsessionrc", ".xserverrc",
	".config/autostart", ".config/plasma-workspace", ".local/share/applications",
	// systemd user units, wherever systemd --user reads them.
	".config/systemd", ".local/share/systemd",
	// Programs the shells find by PATH (every other PATH entry inside the
	// home is added by Paths).
	".local/bin", "bin",
	// git's global configuration: hooksPath, aliases, filters, pagers.
	".gitconfig", ".config/git",
	// Editors' start-up files.
	".vimrc", ".gvimrc", ".exrc", ".config/nvim", ".emacs", ".emacs.el", ".emacs.d",
	// direnv's own configuration (~/.ssh, rc included, is protected
	// whole by moat's protections).
	".config/direnv",
}

// Paths returns the run-code entries of home (absolute, clean): Names,
// the RunsCode rows of the control-file table as they sit at the top of
// the home (wildcard rows only for entries that exist), and each entry
// of pathEnv (a PATH value) that lies inside the home. Each appears once,
// in a fixed order. An empty or relative home gives none.
func Paths(home, pathEnv string) []string {
	if home == "" || !filepath.IsAbs(home) {
		return nil
	}
	home = filepath.Clean(home)
	var out []string
	add := func(p string) {
		if p != home && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, n := range Names {
		add(filepath.Join(home, filepath.FromSlash(n)))
	}
	var wild []string
	for _, e := range controlfiles.Table {
		if e.Class != controlfiles.RunsCode {
			continue
		}
		if strings.Contains(e.Path, "*") {
			wild = append(wild, e.Path)
			continue
		}
		add(filepath.Join(home, filepath.FromSlash(e.Path)))
	}
	if len(wild) > 0 {
		if entries, err := os.ReadDir(home); err == nil {
			for _, e := range entries {
				if controlfiles.Top(e.Name()) == controlfiles.RunsCode && !slices.Contains(out, filepath.Join(home, e.Name())) {
					add(filepath.Join(home, e.Name()))
				}
			}
		}
	}
	real := home
	if r, err := filepath.EvalSymlinks(home); err == nil {
		real = r
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if !filepath.IsAbs(dir) {
			continue
		}
		dir = filepath.Clean(dir)
		if under(dir, home) {
			add(dir)
			continue
		}
		if real != home && under(dir, real) {
			add(filepath.Join(home, dir[len(real):]))
		}
	}
	return out
}

// under reports whether p is dir or lies inside it.
func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}
