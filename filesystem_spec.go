package moat

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/moat-sandbox/moat/internal/spec"
)

// maxVirtualBytes bounds the contents of all virtual files together: they
// travel to the sandbox's helper in its description.
const maxVirtualBytes = 64 << 10

// fsPolicy translates Deny, ReadOnly, Seal, VirtualFiles and HideProc. A
// path is kept as written and, where links lead elsewhere on the way, as
// its canonical path too: Landlock rules hold on the objects a path leads
// to, not on its spelling.
func (s *Sandbox) fsPolicy() (spec.FS, error) {
	c := &s.cfg
	f := spec.FS{HideProc: c.HideProc}
	f.Deny = withCanonical(c.Deny)
	f.ReadOnly = withCanonical(c.ReadOnly)
	f.Seal = withCanonical(c.Seal)
	total := 0
	for p, content := range c.VirtualFiles {
		total += len(content)
		f.Virtual = append(f.Virtual, spec.VirtualFile{Path: p, Content: []byte(content)})
	}
	if total > maxVirtualBytes {
		return f, errorf("virtual files: %d bytes of contents, over the %d-byte limit", total, maxVirtualBytes)
	}
	sort.Slice(f.Virtual, func(i, j int) bool { return f.Virtual[i].Path < f.Virtual[j].Path })
	return f, nil
}

// withCanonical returns paths, each followed by its canonical form when
// that differs, without duplicates. Nil stays nil, so that an empty policy
// costs nothing.
func withCanonical(paths []string) []string {
	if len(paths) == 0 {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, p := range paths {
		add(p)
		if r := canonicalPath(p); r != "" {
			add(r)
		}
	}
	return out
}

// canonicalPath resolves the links of p's longest existing prefix and
// appends the rest, so that a missing path under a linked directory is
// named where it would appear. It returns "" when nothing resolves.
func canonicalPath(p string) string {
	rest := ""
	for dir := p; ; dir = filepath.Dir(dir) {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		} else if !os.IsNotExist(err) {
			return ""
		}
		if dir == "/" || dir == "." {
			return ""
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		if strings.HasSuffix(rest, "/") {
			rest = strings.TrimSuffix(rest, "/")
		}
	}
}
