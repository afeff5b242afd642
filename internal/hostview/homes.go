package hostview

import (
	"os"
	"path/filepath"
)

// OwnHome returns the user's home directory, resolved: $HOME, else the
// one /etc/passwd gives.
func OwnHome() string {
	h := os.Getenv("HOME")
	if h == "" || !filepath.IsAbs(h) {
		h = PasswdHome()
	}
	if h == "" {
		return ""
	}
	if r, err := filepath.EvalSymlinks(h); err == nil {
		return r
	}
	return filepath.Clean(h)
}

// MaxHomes bounds how many home directories under /home are protected.
const MaxHomes = 256

// AllHomes lists the home directories whose secrets are protected: the
// user's own (as $HOME and /etc/passwd give it), root's, and every one
// under /home, which a permissive sandbox or a broad grant could reach.
func AllHomes(own string) []string {
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
	add(PasswdHome())
	add("/root")
	if entries, err := os.ReadDir("/home"); err == nil {
		for i, e := range entries {
			if i == MaxHomes {
				break
			}
			if e.IsDir() {
				add(filepath.Join("/home", e.Name()))
			}
		}
	}
	return out
}

// ResolveExisting resolves the links of the longest existing prefix of p
// and appends the rest, so that a protected path reached through a link
// (a dotfile manager's ~/.ssh -> ~/dotfiles/ssh) is protected where it
// really is.
func ResolveExisting(p string) string {
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
