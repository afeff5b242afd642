package venv

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// manifestFormat is the version of the manifest's layout.
const manifestFormat = 1

// maxManifest bounds what ReadManifest reads.
const maxManifest = 64 << 10

// Manifest records what Create built in a venv, so that a later Create
// with the same request reuses it without running anything. It lives
// outside the venv ([Spec.Manifest]), where no install sandbox and no
// code's sandbox can write, and the host writes it only after the install
// sandbox has exited and what it installed was checked. The zero value
// matches no venv.
type Manifest struct {
	// Format is the manifest layout's version.
	Format int `json:"format"`
	// Interpreter is the real path of the base interpreter.
	Interpreter string `json:"interpreter"`
	// Packages is the package set, as PackageSet gives it.
	Packages []string `json:"packages"`
	// SystemSitePackages is the venv's --system-site-packages switch.
	SystemSitePackages bool `json:"system-site-packages"`
}

// Equal reports whether m and o describe the same venv.
func (m Manifest) Equal(o Manifest) bool {
	return m.Format == o.Format && m.Interpreter == o.Interpreter &&
		m.SystemSitePackages == o.SystemSitePackages && slices.Equal(m.Packages, o.Packages)
}

// Key is a short name for the request m describes, for a cache of venvs
// keyed by their package set (and interpreter and switch).
func (m Manifest) Key() string {
	h := sha256.New()
	fmt.Fprintf(h, "%d\x00%s\x00%t", m.Format, m.Interpreter, m.SystemSitePackages)
	for _, p := range m.Packages {
		fmt.Fprintf(h, "\x00%s", p)
	}
	return hex.EncodeToString(h.Sum(nil))[:20]
}

// KeyOf is the cache key of the venv s asks for: the resolved interpreter,
// the package set and the system site-packages switch. extra, when not
// empty, keeps apart venvs that must not be shared (a writable one).
func KeyOf(s Spec, extra string) (string, error) {
	look := s.LookPath
	if look == nil {
		look = execLookPath
	}
	interp, err := Interpreter(s.Python, look)
	if err != nil {
		return "", err
	}
	for _, p := range s.Packages {
		if err := CheckPackage(p); err != nil {
			return "", fmt.Errorf("venv: package %q: %v", p, err)
		}
	}
	m := Manifest{Format: manifestFormat, Interpreter: interp + extra, Packages: PackageSet(s.Packages), SystemSitePackages: s.SystemSitePackages}
	return m.Key(), nil
}

// ReadManifest reads the manifest file at file (a [Spec.Manifest]).
func ReadManifest(file string) (Manifest, error) {
	var m Manifest
	f, err := os.OpenFile(file, os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		return m, err
	}
	defer f.Close()
	dec := json.NewDecoder(&limited{f: f, n: maxManifest})
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return Manifest{}, fmt.Errorf("venv manifest %q: %v", file, err)
	}
	return m, nil
}

// ParseManifest decodes a manifest.
func ParseManifest(data []byte) (Manifest, error) {
	var m Manifest
	if len(data) > maxManifest {
		return m, errors.New("manifest too large")
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return Manifest{}, err
	}
	return m, nil
}

type limited struct {
	f *os.File
	n int64
}

func (l *limited) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errors.New("manifest too large")
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.f.Read(p)
	l.n -= int64(n)
	return n, err
}

// WriteManifest writes m to the manifest file at file atomically: a
// temporary file beside it, synced, then renamed over it, so a reader sees
// the old manifest or the new one, never half of one.
func WriteManifest(file string, m Manifest) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("venv manifest %q: %v", file, err)
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := file + ".tmp-" + hex.EncodeToString(rnd[:])
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, 0o600)
	if err != nil {
		return fmt.Errorf("venv manifest %q: %v", file, bare(err))
	}
	_, err = f.Write(append(data, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, file)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("venv manifest %q: %v", file, bare(err))
	}
	return nil
}

// PackageSet is packages trimmed, sorted and without duplicates: the set a
// manifest records.
func PackageSet(packages []string) []string {
	out := []string{}
	for _, p := range packages {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// CheckPackage refuses a requirement that pip would read as an option (a
// leading "-"), that holds a control character or nothing at all, or that
// names no package (a path or URL alone: moat could not check that it was
// installed; "NAME @ URL" names one).
func CheckPackage(p string) error {
	t := strings.TrimSpace(p)
	switch {
	case t == "":
		return errors.New("empty")
	case strings.HasPrefix(t, "-"):
		return errors.New("starts with '-', which pip would read as an option")
	case len(t) > 1024:
		return errors.New("longer than 1024 bytes")
	}
	for _, r := range t {
		if unicode.IsControl(r) {
			return errors.New("holds a control character")
		}
	}
	if _, err := RequirementName(t); err != nil {
		return err
	}
	return nil
}

// CheckIndex refuses index options pip would misread: an index URL that
// is not http, https or file, a --find-links entry that starts with "-" or
// holds a control character, and an index URL together with NoIndex.
func CheckIndex(idx Index) error {
	if idx.URL != "" {
		if err := checkArg(idx.URL); err != nil {
			return fmt.Errorf("index URL %q: %v", idx.URL, err)
		}
		u, err := url.Parse(idx.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "file") || (u.Scheme != "file" && u.Host == "") {
			return fmt.Errorf("index URL %q: want an http, https or file URL", idx.URL)
		}
		if idx.NoIndex {
			return fmt.Errorf("index URL %q: given with no-index, which uses no index", idx.URL)
		}
	}
	for _, l := range idx.FindLinks {
		if err := checkArg(l); err != nil {
			return fmt.Errorf("find-links %q: %v", l, err)
		}
	}
	return nil
}

func checkArg(s string) error {
	if s == "" {
		return errors.New("empty")
	}
	if strings.HasPrefix(s, "-") {
		return errors.New("starts with '-'")
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return errors.New("holds a control character")
		}
	}
	return nil
}

// PathKey is a short name for the venv at the absolute path path, under
// which its manifest and build cache are kept outside it.
func PathKey(path string) string {
	h := sha256.Sum256([]byte(filepath.Clean(path)))
	return hex.EncodeToString(h[:])[:24]
}
