package hostview

import (
	"os"
	"path/filepath"

	"github.com/moat-sandbox/moat/internal/paths"
	"github.com/moat-sandbox/moat/internal/spec"
)

// Input is what decides a sandbox's view of the homes. The zero value is
// the strict level with nothing protected.
type Input struct {
	// Level is the isolation level.
	Level spec.Level
	// ProtectHome keeps the home hidden but for its toolchain entries
	// (default and permissive levels); false shows the whole home at the
	// default level and leaves it unhidden at the permissive one.
	ProtectHome bool
	// Protected lists the protected paths under one home; nil protects
	// nothing.
	Protected func(home string) []string
	// Toolchains lists a home's toolchain entries, which the default and
	// permissive levels show readable and executable when ProtectHome.
	Toolchains func(home string) []string
	// Granted are the granted paths: a path granted as such is never
	// protected.
	Granted []string
}

// View decides what a sandbox sees of the users' homes on this host: which
// entries of the user's home show, and which paths of every home stay
// unreadable (both a protected link and what it leads to). It reads the
// homes but changes nothing. SharedTemp is left for the caller, which
// knows the working directory.
func View(in Input) spec.View {
	var v spec.View
	v.Home = OwnHome()
	granted := map[string]bool{}
	for _, g := range in.Granted {
		granted[g] = true
	}
	seen := map[string]bool{}
	addProtected := func(p string) {
		if !seen[p] && !granted[p] {
			seen[p] = true
			v.Protected = append(v.Protected, p)
		}
	}
	dirs := map[string]string{} // a directory and what it resolves to; "" when missing
	names := listings{}         // what each resolved directory holds
	for _, h := range AllHomes(v.Home) {
		if in.Protected == nil {
			break
		}
		for _, p := range in.Protected(h) {
			// A path whose directory does not exist needs nothing: a
			// directory created later has no rule, so nothing in it is
			// readable (see the Landlock carve in the Linux backend).
			parent := resolveDir(filepath.Dir(p), dirs)
			if parent == "" {
				continue
			}
			addProtected(p)
			real := filepath.Join(parent, filepath.Base(p))
			if t, ok := names.lookup(parent, filepath.Base(p)); ok && t&os.ModeSymlink != 0 {
				if r, err := filepath.EvalSymlinks(real); err == nil {
					real = r
				}
			}
			if real != p {
				addProtected(real)
			}
		}
	}
	if v.Home == "" {
		return v
	}
	curated := func() {
		if in.Toolchains == nil {
			return
		}
		for _, p := range in.Toolchains(v.Home) {
			parent := resolveDir(filepath.Dir(p), dirs)
			if parent == "" {
				continue
			}
			t, ok := names.lookup(parent, filepath.Base(p))
			if !ok {
				continue
			}
			// An entry that is a link (~/.cargo -> ~/dotfiles/cargo) shows
			// as that link, beside what it leads to, so the toolchain
			// finds it by its usual name.
			if t&os.ModeSymlink != 0 && !seen[p] {
				v.HomeRead = append(v.HomeRead, p)
			}
			if r := ResolveExisting(p); r != "" && !seen[r] {
				v.HomeRead = append(v.HomeRead, r)
			}
		}
	}
	switch in.Level {
	case spec.LevelDefault:
		if in.ProtectHome {
			curated()
		} else {
			v.HomeRead = []string{v.Home}
		}
	case spec.LevelPermissive:
		if in.ProtectHome {
			v.HideHome = v.Home
			curated()
		}
	}
	return v
}

// Readable reports whether p, in the home, is readable in view v at
// level.
func Readable(v spec.View, p string, level spec.Level) bool {
	for _, q := range v.Protected {
		if paths.Under(p, q) {
			return false
		}
	}
	if level == spec.LevelPermissive && v.HideHome == "" {
		return true
	}
	for _, r := range v.HomeRead {
		if paths.Under(p, r) {
			return true
		}
	}
	return false
}

// homeEnv are variables that point toolchains at their configuration in
// the real home while HOME is private, set to rel when probe exists and
// is readable in the sandbox.
var homeEnv = []struct{ name, rel, probe string }{
	{"GIT_CONFIG_GLOBAL", ".gitconfig", ".gitconfig"},
	{"GIT_CONFIG_GLOBAL", ".config/git/config", ".config/git/config"},
	{"PYTHONUSERBASE", ".local", ".local/lib"}, // user site-packages live in .local/lib
	{"RUSTUP_HOME", ".rustup", ".rustup"},
	{"PYENV_ROOT", ".pyenv", ".pyenv"},
	{"NVM_DIR", ".nvm", ".nvm"},
	{"SDKMAN_DIR", ".sdkman", ".sdkman"},
}

// Env returns the variables that point toolchains at the real home, for
// the parts of it that view v shows at level.
func Env(v spec.View, level spec.Level) []string {
	if v.Home == "" || level == spec.LevelStrict {
		return nil
	}
	var out []string
	set := map[string]bool{}
	for _, e := range homeEnv {
		p, probe := filepath.Join(v.Home, e.rel), filepath.Join(v.Home, e.probe)
		if set[e.name] || !Readable(v, probe, level) {
			continue
		}
		if _, err := os.Stat(probe); err == nil {
			set[e.name] = true
			out = append(out, e.name+"="+p)
		}
	}
	return out
}
