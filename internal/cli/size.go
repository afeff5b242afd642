package cli

import "github.com/moat-sandbox/moat/policy"

// The size and count parsers live in package policy, which reads the same
// values from the config file; these names keep the flag code short.

// unlimited is what size and count flags accept to lift a limit. It maps to
// -1, which moat.Limits reads as "no limit".
const unlimited = policy.Unlimited

// parseSize parses a byte count; see policy.ParseSize.
func parseSize(s string) (int64, error) { return policy.ParseSize(s) }

// formatSize spells n as parseSize reads it; see policy.FormatSize.
func formatSize(n int64) string { return policy.FormatSize(n) }

// parseCount parses a whole number or "unlimited"; see policy.ParseCount.
func parseCount(s string) (int64, error) { return policy.ParseCount(s) }
