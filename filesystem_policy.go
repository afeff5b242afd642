package moat

import (
	"path/filepath"
	"strconv"
)

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
	// Enforced on Linux (filesystem_policy_linux.go); other backends
	// refuse them until they do.
	if !filesystemPolicyEnforced && (len(c.Deny)+len(c.ReadOnly)+len(c.Seal)+len(c.VirtualFiles) > 0 || c.HideProc || isHostNetwork(c.Network)) {
		return &ConfigError{Field: "filesystem policy", Value: "deny/read-only/seal/virtual/hide-proc", Problem: "not enforced yet"}
	}
	return nil
}

// isAbsClean reports whether p is absolute and clean.
func isAbsClean(p string) bool { return filepath.IsAbs(p) && filepath.Clean(p) == p }
