package policy

import (
	"errors"
	"fmt"
	"strings"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/venv"
)

// Python is how moat python builds and uses its venv: the [python] table
// of a config file, or the python command's flags. Every field's zero value
// means "not given here".
type Python struct {
	// Venv, when not empty, is the venv's directory, absolute.
	Venv string
	// Packages adds pip requirement specifiers.
	Packages []string
	// Interpreter, when not empty, is the base interpreter (a name or a
	// path).
	Interpreter string
	// SystemSitePackages, when set, says whether the venv sees the
	// interpreter's own site-packages.
	SystemSitePackages *bool
	// VenvBackend, when not empty, is "auto", "uv" or "python".
	VenvBackend string
	// IndexURL, when not empty, replaces pip's default index.
	IndexURL string
	// FindLinks adds directories (absolute) or URLs of distributions.
	FindLinks []string
	// NoIndex, when set, says whether to install from FindLinks only.
	NoIndex *bool
	// AllowPipInstall, when set, says whether the sandbox may change the
	// venv.
	AllowPipInstall *bool
}

// rawPython is [python].
type rawPython struct {
	Venv               any `toml:"venv"`
	Packages           any `toml:"packages"`
	Python             any `toml:"python"`
	Interpreter        any `toml:"interpreter"`
	SystemSitePackages any `toml:"system-site-packages"`
	VenvBackend        any `toml:"venv-backend"`
	IndexURL           any `toml:"index-url"`
	FindLinks          any `toml:"find-links"`
	NoIndex            any `toml:"no-index"`
	AllowPipInstall    any `toml:"allow-pip-install"`
}

// ParseVenvBackend checks a venv backend: auto, uv or python.
func ParseVenvBackend(s string) (string, error) {
	b, err := venv.ParseBackend(s)
	if err != nil {
		return "", errors.New("want auto, uv or python")
	}
	return b.String(), nil
}

// ParsePackage checks a pip requirement specifier and returns it trimmed.
func ParsePackage(s string) (string, error) {
	if err := venv.CheckPackage(s); err != nil {
		return "", err
	}
	return strings.TrimSpace(s), nil
}

// ParseIndexURL checks an index URL: http, https or file.
func ParseIndexURL(s string) (string, error) {
	if err := venv.CheckIndex(venv.Index{URL: s}); err != nil {
		_, why, _ := strings.Cut(err.Error(), ": ") // after "index URL %q"
		return "", errors.New(why)
	}
	return s, nil
}

// CheckFindLink checks a find-links entry, a directory or a URL: pip
// must not read it as an option.
func CheckFindLink(s string) error {
	if err := venv.CheckIndex(venv.Index{FindLinks: []string{s}}); err != nil {
		return errors.New("want a directory or a URL")
	}
	return nil
}

// isURL reports whether a find-links entry is a URL rather than a path.
func isURL(s string) bool { return strings.Contains(s, "://") }

// python checks [python].
func (c *checker) python(raw *rawPython) (Python, error) {
	var p Python
	if raw == nil {
		return p, nil
	}
	var err error
	if p.Venv, err = c.path([]string{"python", "venv"}, raw.Venv); err != nil {
		return p, err
	}
	if p.Packages, err = c.list([]string{"python", "packages"}, raw.Packages, ParsePackage); err != nil {
		return p, err
	}
	if raw.Python != nil && raw.Interpreter != nil {
		return p, c.fail([]string{"python", "interpreter"}, "python.interpreter: given with python.python, which names the same thing")
	}
	for _, f := range []struct {
		key string
		v   any
	}{{"python", raw.Python}, {"interpreter", raw.Interpreter}} {
		if f.v == nil {
			continue
		}
		key := []string{"python", f.key}
		s, err := c.str(key, f.v)
		if err != nil {
			return p, err
		}
		if s == "" || strings.ContainsAny(s, "\x00\n") || strings.HasPrefix(s, "-") {
			return p, c.fail(key, "python.%s %q: want an interpreter's name or path", f.key, s)
		}
		if strings.Contains(s, "/") {
			if s, err = c.expand(s); err != nil {
				return p, c.fail(key, "python.%s: %v", f.key, err)
			}
		}
		p.Interpreter = s
	}
	if p.VenvBackend, err = c.choice([]string{"python", "venv-backend"}, raw.VenvBackend, ParseVenvBackend); err != nil {
		return p, err
	}
	if p.IndexURL, err = c.choice([]string{"python", "index-url"}, raw.IndexURL, ParseIndexURL); err != nil {
		return p, err
	}
	links, err := c.list([]string{"python", "find-links"}, raw.FindLinks, func(s string) (string, error) {
		if err := CheckFindLink(s); err != nil {
			return "", err
		}
		if isURL(s) {
			return s, nil
		}
		return c.expand(s)
	})
	if err != nil {
		return p, err
	}
	p.FindLinks = links
	for _, f := range []struct {
		key string
		v   any
		dst **bool
	}{
		{"system-site-packages", raw.SystemSitePackages, &p.SystemSitePackages},
		{"no-index", raw.NoIndex, &p.NoIndex},
		{"allow-pip-install", raw.AllowPipInstall, &p.AllowPipInstall},
	} {
		if f.v == nil {
			continue
		}
		b, ok := f.v.(bool)
		if !ok {
			return p, c.fail([]string{"python", f.key}, "python.%s: want true or false, not %s", f.key, typeName(f.v))
		}
		*f.dst = &b
	}
	return p, nil
}

// mergePython layers l over r: scalars of l win, lists concatenate. mark
// records the key of each scalar l sets.
func mergePython(r, l *Python, mark func(key string)) {
	str := func(key string, dst *string, v string) {
		if v != "" {
			*dst = v
			mark(key)
		}
	}
	flag := func(key string, dst **bool, v *bool) {
		if v != nil {
			b := *v
			*dst = &b
			mark(key)
		}
	}
	str("python.venv", &r.Venv, l.Venv)
	str("python.python", &r.Interpreter, l.Interpreter)
	str("python.venv-backend", &r.VenvBackend, l.VenvBackend)
	str("python.index-url", &r.IndexURL, l.IndexURL)
	flag("python.system-site-packages", &r.SystemSitePackages, l.SystemSitePackages)
	flag("python.no-index", &r.NoIndex, l.NoIndex)
	flag("python.allow-pip-install", &r.AllowPipInstall, l.AllowPipInstall)
	r.Packages = append(r.Packages, l.Packages...)
	r.FindLinks = append(r.FindLinks, l.FindLinks...)
}

// checkPython checks the merged python settings against each other: an
// index URL with no index says two contrary things.
func (r *Result) checkPython() error {
	p := &r.Python
	if p.IndexURL != "" && p.NoIndex != nil && *p.NoIndex {
		l := r.layerOf("python.index-url")
		n := r.layerOf("python.no-index")
		return fmt.Errorf("%s%s %q: given with %s, which uses no index", l.at("python.index-url"), l.spell("python.index-url"), p.IndexURL, n.spell("python.no-index"))
	}
	return nil
}

// VenvConfig is the venv the merged settings describe, with defaults:
// system site-packages on unless set off (heel's default), python3, the
// auto backend, and a cached venv when no path is given.
func (p Python) VenvConfig() (moat.VenvConfig, error) {
	if p.Venv != "" {
		// The venv is built and written where the path leads: never
		// through a link an earlier run's sandbox could have planted.
		if err := plantedLinkError("venv", p.Venv); err != nil {
			return moat.VenvConfig{}, err
		}
	}
	v := moat.VenvConfig{
		Path:               p.Venv,
		Packages:           p.Packages,
		Python:             p.Interpreter,
		SystemSitePackages: p.SystemSitePackages == nil || *p.SystemSitePackages,
		IndexURL:           p.IndexURL,
		FindLinks:          p.FindLinks,
		NoIndex:            p.NoIndex != nil && *p.NoIndex,
		Mutable:            p.AllowPip(),
	}
	if p.VenvBackend != "" {
		b, err := venv.ParseBackend(p.VenvBackend)
		if err != nil {
			return v, fmt.Errorf("venv backend %q: %w", p.VenvBackend, err)
		}
		v.Backend = moat.VenvBackend(b)
	}
	return v, nil
}

// AllowPip reports whether the sandbox may change the venv.
func (p Python) AllowPip() bool { return p.AllowPipInstall != nil && *p.AllowPipInstall }
