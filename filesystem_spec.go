package moat

import (
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/moat-sandbox/moat/internal/spec"
)

// maxVirtualBytes bounds the contents of all virtual files together: they
// travel to the sandbox's helper in its description.
const maxVirtualBytes = 64 << 10

// fsPolicy translates Deny, ReadOnly, Seal, VirtualFiles and HideProc. A
// path is kept as written and, where links lead elsewhere on the way, as
// its canonical path too (canonical, read by canonicalPaths): Landlock
// rules hold on the objects a path leads to, not on its spelling. It does
// no I/O; the size of the virtual files was checked by validate.go.
func fsPolicy(c *Config, canonical map[string]string) spec.FS {
	f := spec.FS{HideProc: c.HideProc}
	f.Deny = withCanonical(c.Deny, canonical)
	f.ReadOnly = withCanonical(c.ReadOnly, canonical)
	f.Seal = withCanonical(c.Seal, canonical)
	for p, content := range c.VirtualFiles {
		f.Virtual = append(f.Virtual, spec.VirtualFile{Path: p, Content: []byte(content)})
	}
	sort.Slice(f.Virtual, func(i, j int) bool { return f.Virtual[i].Path < f.Virtual[j].Path })
	return f
}

// virtualBytes checks that the contents of all virtual files together fit
// in maxVirtualBytes.
func virtualBytes(c *Config) error {
	total := 0
	for _, content := range c.VirtualFiles {
		total += len(content)
	}
	if total > maxVirtualBytes {
		return errorf("virtual files: %d bytes of contents, over the %d-byte limit", total, maxVirtualBytes)
	}
	return nil
}

// withCanonical returns paths, each followed by its canonical form when
// that differs, without duplicates. Nil stays nil, so that an empty policy
// costs nothing.
func withCanonical(paths []string, canonical map[string]string) []string {
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
		if r := canonical[p]; r != "" {
			add(r)
		}
	}
	return out
}

// canonicalPaths reads the canonical path (canonicalPath) of each path of
// lists that has one; nil when none has.
func canonicalPaths(lists ...[]string) map[string]string {
	var out map[string]string
	for _, l := range lists {
		for _, p := range l {
			if r := canonicalPath(p); r != "" {
				if out == nil {
					out = map[string]string{}
				}
				out[p] = r
			}
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

// validateFilesystemPolicy checks Deny, ReadOnly, Seal and VirtualFiles:
// each path absolute and clean.
func validateFilesystemPolicy(c *Config) error {
	check := func(field string, paths []string) error {
		for _, p := range paths {
			if !isAbsClean(p) {
				return &ConfigError{Field: field, Value: strconv.Quote(p), Problem: "want an absolute, clean path"}
			}
		}
		return nil
	}
	if err := check("deny", c.Deny); err != nil {
		return err
	}
	if err := check("read-only", c.ReadOnly); err != nil {
		return err
	}
	if err := check("seal", c.Seal); err != nil {
		return err
	}
	for p := range c.VirtualFiles {
		if !isAbsClean(p) {
			return &ConfigError{Field: "virtual file", Value: strconv.Quote(p), Problem: "want an absolute, clean path"}
		}
	}
	// Enforced on Linux; other backends refuse them until they do.
	if !filesystemPolicyEnforced && (len(c.Deny)+len(c.ReadOnly)+len(c.Seal)+len(c.VirtualFiles) > 0 || c.HideProc || isHostNetwork(c.Network)) {
		return &ConfigError{Field: "filesystem policy", Value: "deny/read-only/seal/virtual/hide-proc", Problem: "not enforced yet"}
	}
	return nil
}

// filesystemPolicyEnforced says that this platform's backend enforces
// Deny, ReadOnly, Seal, VirtualFiles, HideProc and HostNetwork: Linux's
// does; elsewhere New refuses them (validateFilesystemPolicy).
const filesystemPolicyEnforced = runtime.GOOS == "linux"

// isAbsClean reports whether p is absolute and clean.
func isAbsClean(p string) bool { return filepath.IsAbs(p) && filepath.Clean(p) == p }
