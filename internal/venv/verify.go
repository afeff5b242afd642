package venv

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// maxSiteEntries bounds how many entries of one site-packages directory
// the host reads when it checks what an install sandbox installed: the
// directory was written by that sandbox, so it is hostile data.
const maxSiteEntries = 100_000

// RequirementName is the distribution name a requirement specifier names
// ("pandas>=2" and "pandas[excel] @ https://…" name pandas), canonical
// as PEP 503 makes it: lower case, each run of "-", "_" and "." one "-".
// A requirement that names no distribution (a path or a URL alone) is an
// error: moat could not check that it was installed.
func RequirementName(req string) (string, error) {
	r := strings.TrimSpace(req)
	n := 0
	for n < len(r) && nameByte(r[n]) {
		n++
	}
	if n == 0 || !alnum(r[0]) || !alnum(r[n-1]) {
		return "", errors.New("names no package; write it as NAME, NAME==VERSION or NAME @ URL")
	}
	if n < len(r) && !strings.ContainsRune(" \t[(;<>=!~@,", rune(r[n])) {
		return "", errors.New("names no package; write it as NAME, NAME==VERSION or NAME @ URL")
	}
	return CanonicalName(r[:n]), nil
}

// CanonicalName is name as PEP 503 compares it.
func CanonicalName(name string) string {
	var b strings.Builder
	sep := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '-' || c == '_' || c == '.' {
			sep = true
			continue
		}
		if sep && b.Len() > 0 {
			b.WriteByte('-')
		}
		sep = false
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// hasMarker reports whether req carries an environment marker (";"), under
// which pip may rightly install nothing.
func hasMarker(req string) bool {
	_, after, ok := strings.Cut(req, ";")
	return ok && strings.TrimSpace(after) != ""
}

func nameByte(c byte) bool { return alnum(c) || c == '-' || c == '_' || c == '.' }

func alnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// DistName is the canonical distribution name of a site-packages entry
// name: NAME-VERSION.dist-info, NAME-VERSION.egg-info or NAME.egg-info give
// NAME; anything else gives "".
func DistName(entry string) string {
	var base string
	switch {
	case strings.HasSuffix(entry, ".dist-info"):
		base = strings.TrimSuffix(entry, ".dist-info")
	case strings.HasSuffix(entry, ".egg-info"):
		base = strings.TrimSuffix(entry, ".egg-info")
	default:
		return ""
	}
	name, _, _ := strings.Cut(base, "-")
	if name == "" {
		return ""
	}
	for i := 0; i < len(name); i++ {
		if !nameByte(name[i]) {
			return ""
		}
	}
	return CanonicalName(name)
}

// installedNames adds to seen the canonical names of the distributions
// whose metadata directories lie in dir. It reads entry names only, never
// their contents, and at most maxSiteEntries of them: dir may have been
// written by a sandbox. A missing dir adds nothing.
func installedNames(dir string, seen map[string]bool) error {
	f, err := os.Open(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %q: %v", dir, bare(err))
	}
	defer f.Close()
	read := 0
	for {
		names, err := f.Readdirnames(1024)
		for _, n := range names {
			if d := DistName(n); d != "" {
				seen[d] = true
			}
		}
		read += len(names)
		if read > maxSiteEntries {
			return fmt.Errorf("%q holds more than %d entries", dir, maxSiteEntries)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading %q: %v", dir, bare(err))
		}
	}
}

// checkInstalled checks, by the names of the metadata directories the
// host itself reads, that every package asked for is in one of the venv's
// site-packages (or, with system site-packages, the base interpreter's),
// so that an installer that only said it installed something (a shadow
// pip) cannot make moat record it. A requirement under an environment
// marker is not checked: pip may rightly skip it.
func checkInstalled(venvSite, systemSite []string, packages []string) error {
	seen := map[string]bool{}
	for _, d := range append(append([]string(nil), venvSite...), systemSite...) {
		if err := installedNames(d, seen); err != nil {
			return err
		}
	}
	var missing []string
	for _, p := range packages {
		if hasMarker(p) {
			continue
		}
		name, err := RequirementName(p)
		if err != nil {
			return fmt.Errorf("package %q: %v", p, err)
		}
		if !seen[name] {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the installer finished, but %s is not installed (no %s metadata in %s)", strings.Join(missing, ", "), "dist-info or egg-info", strings.Join(venvSite, ", "))
	}
	return nil
}

// sitePackagesOf lists the venv's lib/python*/site-packages directories
// that are real directories, reading lib/ by name, bounded.
func sitePackagesOf(venvPath string) ([]string, error) {
	lib := filepath.Join(venvPath, "lib")
	f, err := os.Open(lib)
	if err != nil {
		return nil, fmt.Errorf("reading %q: %v", lib, bare(err))
	}
	defer f.Close()
	var out []string
	names, err := f.Readdirnames(1024)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("reading %q: %v", lib, bare(err))
	}
	for _, n := range names {
		if !strings.HasPrefix(n, "python") {
			continue
		}
		sp := filepath.Join(lib, n, "site-packages")
		if fi, err := os.Lstat(sp); err == nil && fi.IsDir() {
			out = append(out, sp)
		}
	}
	return out, nil
}
