package moat

import (
	"os"
	"path/filepath"
	"strings"
)

// exposure is what the isolation level and the protections make of the
// user's home, resolved on this host.
type exposure struct {
	// homeRead are readable (and, holding toolchains, executable) paths
	// in the user's home.
	homeRead []string
	// protected are denied wherever the level or a grant of a parent
	// would expose them: both a protected link and what it leads to.
	protected []string
	// hideHome is the home itself when it must stay hidden at a level
	// that otherwise shows everything.
	hideHome string
	// home is the user's own home, resolved; empty if unknown.
	home string
}

// homeEnv are variables that point toolchains at their configuration in the
// real home while HOME is the working directory, set to rel when probe
// exists and is readable in the sandbox.
var homeEnv = []struct{ name, rel, probe string }{
	{"GIT_CONFIG_GLOBAL", ".gitconfig", ".gitconfig"},
	{"GIT_CONFIG_GLOBAL", ".config/git/config", ".config/git/config"},
	{"PYTHONUSERBASE", ".local", ".local/lib"}, // user site-packages live in .local/lib
	{"RUSTUP_HOME", ".rustup", ".rustup"},
	{"PYENV_ROOT", ".pyenv", ".pyenv"},
	{"NVM_DIR", ".nvm", ".nvm"},
	{"SDKMAN_DIR", ".sdkman", ".sdkman"},
}

// computeExposure decides what the sandbox sees of the home directories.
func computeExposure(cfg *Config) exposure {
	sec := cfg.security()
	var ex exposure
	ex.home = ownHome()
	granted := map[string]bool{}
	for _, g := range cfg.Grants {
		granted[g.Path] = true
	}
	seen := map[string]bool{}
	addProtected := func(p string) {
		if !seen[p] && !granted[p] {
			seen[p] = true
			ex.protected = append(ex.protected, p)
		}
	}
	dirs := map[string]string{} // a directory and what it resolves to; "" when missing
	for _, h := range allHomes(ex.home) {
		for _, p := range sec.ProtectedPaths(h) {
			// A path whose directory does not exist needs nothing: a
			// directory created later has no rule, so nothing in it is
			// readable (see the Landlock carve in the Linux backend).
			parent := resolveDir(filepath.Dir(p), dirs)
			if parent == "" {
				continue
			}
			addProtected(p)
			real := filepath.Join(parent, filepath.Base(p))
			if fi, err := os.Lstat(real); err == nil && fi.Mode()&os.ModeSymlink != 0 {
				if r, err := filepath.EvalSymlinks(real); err == nil {
					real = r
				}
			}
			if real != p {
				addProtected(real)
			}
		}
	}
	if ex.home == "" {
		return ex
	}
	curated := func() {
		for _, p := range ToolchainPaths(ex.home) {
			if _, err := os.Lstat(p); err != nil {
				continue
			}
			if r := resolveExisting(p); r != "" && !seen[r] {
				ex.homeRead = append(ex.homeRead, r)
			}
		}
	}
	switch cfg.Isolation {
	case IsolationDefault:
		if sec.ProtectUserHome {
			curated()
		} else {
			ex.homeRead = []string{ex.home}
		}
	case IsolationPermissive:
		if sec.ProtectUserHome {
			ex.hideHome = ex.home
			curated()
		}
	}
	return ex
}

// env returns the variables that point toolchains at the real home.
func (ex exposure) env(level Isolation) []string {
	if ex.home == "" || level == IsolationStrict {
		return nil
	}
	var out []string
	set := map[string]bool{}
	for _, v := range homeEnv {
		p, probe := filepath.Join(ex.home, v.rel), filepath.Join(ex.home, v.probe)
		if set[v.name] || !ex.readable(probe, level) {
			continue
		}
		if _, err := os.Stat(probe); err == nil {
			set[v.name] = true
			out = append(out, v.name+"="+p)
		}
	}
	return out
}

// readable reports whether p, in the home, is readable at level.
func (ex exposure) readable(p string, level Isolation) bool {
	for _, q := range ex.protected {
		if p == q || strings.HasPrefix(p, q+"/") {
			return false
		}
	}
	if level == IsolationPermissive && ex.hideHome == "" {
		return true
	}
	for _, r := range ex.homeRead {
		if p == r || strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return false
}

// ownHome returns the user's home directory, resolved: $HOME, else the
// one /etc/passwd gives.
func ownHome() string {
	h := os.Getenv("HOME")
	if h == "" || !filepath.IsAbs(h) {
		h = passwdHome()
	}
	if h == "" {
		return ""
	}
	if r, err := filepath.EvalSymlinks(h); err == nil {
		return r
	}
	return filepath.Clean(h)
}

// maxHomes bounds how many home directories under /home are protected.
const maxHomes = 256

// allHomes lists the home directories whose secrets are protected: the
// user's own (as $HOME and /etc/passwd give it), root's, and every one
// under /home, which a permissive sandbox or a broad grant could reach.
func allHomes(own string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(h string) {
		if h == "" {
			return
		}
		if r, err := filepath.EvalSymlinks(h); err == nil {
			h = r
		}
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	add(own)
	add(passwdHome())
	add("/root")
	if entries, err := os.ReadDir("/home"); err == nil {
		for i, e := range entries {
			if i == maxHomes {
				break
			}
			if e.IsDir() {
				add(filepath.Join("/home", e.Name()))
			}
		}
	}
	return out
}

// resolveExisting resolves the links of the longest existing prefix of p
// and appends the rest, so that a protected path reached through a link
// (a dotfile manager's ~/.ssh -> ~/dotfiles/ssh) is protected where it
// really is.
func resolveExisting(p string) string {
	rest := ""
	for cur := p; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// resolveDir resolves the directory dir, remembering every answer in
// cache, so that a home's many protected paths cost one lstat per
// directory: "" when it does not exist or is not a directory.
func resolveDir(dir string, cache map[string]string) string {
	if r, ok := cache[dir]; ok {
		return r
	}
	r := ""
	if parent := filepath.Dir(dir); parent == dir {
		r = dir
	} else if rp := resolveDir(parent, cache); rp != "" {
		cand := filepath.Join(rp, filepath.Base(dir))
		if fi, err := os.Lstat(cand); err == nil {
			switch {
			case fi.IsDir():
				r = cand
			case fi.Mode()&os.ModeSymlink != 0:
				if t, err := filepath.EvalSymlinks(cand); err == nil {
					if st, err := os.Stat(t); err == nil && st.IsDir() {
						r = t
					}
				}
			}
		}
	}
	cache[dir] = r
	return r
}
