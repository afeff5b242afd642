// Package homecontrol lists the entries of a home directory that make the
// user's own tools run code later, outside any sandbox: the shells' start-up
// files, the desktop's autostart entries, systemd's user units, the
// directories of PATH, git's global configuration, editors' start-up files,
// and the home's rows of the control-file table (internal/controlfiles).
// moat exec keeps them read-only, and their creation blocked, wherever a
// writable pattern covers them, unless a pattern names one exactly. Under
// a writable home the hidden entries at its top are read-only whole
// anyway (policy: document_home_hidden.go); this list is what still holds
// inside a hidden place that a pattern opens (~/.config), and in the
// home's ordinary directories (~/bin, PATH entries).
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

	// The entries below matter once a pattern names a hidden place of
	// the home (~/.config, ~/.local/share/foo, ~/.*): without one, every
	// hidden entry at the home's top is read-only whole (policy:
	// document_home.go).

	// Start-up outside the shells: systemd-tmpfiles' user rules (which
	// can replace any file of the home at login), session autostart of
	// the desktops and window managers, D-Bus activation, thumbnailers,
	// file-manager actions, MIME handlers.
	".config/user-tmpfiles.d", ".config/autostart-scripts", ".config/i3", ".config/sway", ".config/hypr",
	".config/awesome", ".config/openbox", ".config/lxsession", ".config/lxqt", ".config/labwc", ".config/xfce4",
	".config/qtile", ".config/bspwm", ".config/sxhkd", ".config/river", ".config/niri", ".config/wayfire.ini",
	".config/waybar", ".config/polybar", ".config/dunst", ".config/pipewire", ".config/wireplumber", ".config/dconf",
	".config/mimeapps.list", ".config/kglobalshortcutsrc", ".config/khotkeysrc",
	".local/share/dbus-1", ".local/share/thumbnailers", ".local/share/gnome-shell", ".local/share/kservices5",
	".local/share/kio", ".local/share/plasma", ".local/share/nautilus", ".local/share/nemo", ".local/share/file-manager",
	".local/share/mime", ".local/share/konsole",
	// Shells' data and completion directories, and readline's XDG file.
	".local/share/bash-completion", ".local/share/fish", ".local/share/zsh", ".config/zsh", ".config/readline",
	".config/powershell", ".config/xonsh", ".config/starship.toml",
	// Terminals and multiplexers (commands, shells to start).
	".config/tmux", ".config/kitty", ".config/wezterm", ".config/alacritty", ".config/foot", ".config/ghostty",
	".config/terminator", ".config/screen",
	// Editors and IDEs (XDG start-up files, plugins, tasks, settings).
	".config/vim", ".config/emacs", ".config/doom", ".local/share/nvim", ".local/share/vim", ".config/kak",
	".config/helix", ".config/micro", ".config/Code", ".config/Code - OSS", ".config/Code - Insiders",
	".config/VSCodium", ".config/Cursor", ".config/Windsurf", ".config/zed", ".config/sublime-text",
	".config/sublime-text-3", ".config/JetBrains", ".local/share/JetBrains",
	// Pagers, debuggers, REPLs and tools that run commands from their
	// configuration.
	".config/lesskey", ".config/gdb", ".config/ghc", ".config/sqlite3", ".config/ranger", ".config/lf",
	".config/yazi", ".config/mc", ".config/mpv", ".config/gh", ".config/glab-cli", ".config/lazygit", ".config/tig",
	".config/neomutt", ".config/mutt", ".config/ipython", ".config/jupyter", ".config/matplotlib",
	// Version control beyond git.
	".config/hg", ".config/jj",
	// Toolchains and package managers: go env -w's file, package
	// indexes, hooks and tasks, and the user site of Python (.pth files
	// run at every start).
	".config/go", ".config/pip", ".config/uv", ".config/pypoetry", ".config/pdm", ".config/hatch",
	".config/pnpm", ".config/yarn", ".config/npm", ".config/mise", ".config/nix", ".config/containers",
	".config/composer", ".config/cabal", ".local/lib", ".local/share/pipx", ".local/share/uv",
	// Directories of programs that toolchains put on PATH when they are
	// installed later (so not on today's PATH).
	".cargo/bin", ".cargo/config", ".cargo/config.toml", ".local/share/pnpm", ".local/share/mise",
	".local/share/flatpak", ".local/share/nvm", ".local/share/containers",
	// Top-level start-up files and tool directories, for a pattern that
	// opens the home's hidden entries themselves (~/.*).
	".tmux.conf", ".screenrc", ".lesskey", ".gdbinit", ".lldbinit", ".hgrc", ".jjconfig.toml", ".psqlrc",
	".sqliterc", ".irbrc", ".pryrc", ".ghci", ".Rprofile", ".Renviron", ".erlang", ".sbclrc", ".octaverc",
	".mailcap", ".muttrc", ".mailrc", ".xbindkeysrc", ".xonshrc", ".ideavimrc", ".tigrc", ".perldb",
	".condarc", ".pydistutils.cfg", ".yarnrc", ".yarnrc.yml", ".gemrc", ".nvm", ".pyenv", ".rbenv", ".nodenv",
	".sdkman", ".asdf", ".rvm", ".volta", ".bun", ".deno", ".dotnet/tools", ".ghcup", ".elan", ".opam",
	".jenv", ".goenv", ".gvm", ".perl5", ".nix-profile", ".fzf", ".fzf.bash", ".fzf.zsh", ".p10k.zsh",
	".zinit", ".zplug", ".antigen", ".tmux", ".vim", ".spacemacs", ".doom.d", ".ipython", ".jupyter",
	".julia/config", ".m2", ".gradle", ".cabal", ".docker/cli-plugins", ".docker/config.json", ".kube",
	".node_modules", ".node_libraries", ".vscode-server", ".windsurf", ".mozilla", ".pip", ".poetry",
}

// Files are the entries of Names inside a hidden directory that are
// files when present (the rest are directories, or either). A missing one
// that must be held for a run, in a hidden directory that a pattern made
// writable, is held by an unreadable file rather than a directory, so
// that the tools that read it are not confused. (The home's own top needs
// no placeholders: no entry can be created there during the run.)
var Files = []string{
	".config/wayfire.ini", ".config/mimeapps.list", ".config/kglobalshortcutsrc", ".config/khotkeysrc",
	".config/starship.toml", ".config/lesskey", ".cargo/config", ".cargo/config.toml", ".docker/config.json",
}

// IsFile reports whether the path p ends with one of Files (as the home
// entry it is, under any home). Only the kind of placeholder depends on
// it.
func IsFile(p string) bool {
	p = filepath.ToSlash(p)
	for _, f := range Files {
		if strings.HasSuffix(p, "/"+f) {
			return true
		}
	}
	return false
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
