package gitguard

import "strings"

// Besides git's, the top of a writable place holds control paths that
// agents and moat itself read on the next run: moat's and Heimdall's
// policy fragments (.moat-deny, .heimdall-write, any .moat-* or
// .heimdall-* entry) and the agent skill and configuration directories
// .agents and .pi. A sandbox that could leave a new one would widen the
// policy, or instruct the agent, of every later run there. [Take]
// records those at the top of each place, everything in them included,
// so that [Snapshot.Check] moves aside the ones a run created or changed.

// IsControlName reports whether name, an entry at the top of a writable
// place, is one of those control paths.
func IsControlName(name string) bool {
	switch {
	case name == ".agents", name == ".pi":
		return true
	}
	return strings.HasPrefix(name, ".moat-") || strings.HasPrefix(name, ".heimdall-")
}
