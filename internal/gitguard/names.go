package gitguard

import "github.com/moat-sandbox/moat/internal/controlfiles"

// Besides git's, the top of a writable place holds control paths that
// host tools read when the user works there after a run: the rows of
// internal/controlfiles' table (direnv's .envrc, editor tasks, agent
// hooks and MCP servers, toolchain configuration, moat's and Heimdall's
// own configuration and fragments, ...). A sandbox that could leave a new
// one would run code on the host, or widen the policy of every later run
// there. [Take] records those at the top of each place, everything in
// them included, so that [Snapshot.Check] moves aside the ones a run
// created or changed. The table's files that instruct a host agent
// (AGENTS.md, CLAUDE.md, ...) are recorded too, and reported, not moved,
// when the run changes them.

// IsControlName reports whether name, an entry at the top of a writable
// place, is a control path that makes a host tool run code.
func IsControlName(name string) bool { return controlfiles.Top(name) == controlfiles.RunsCode }

// topEntry records what the table names at the top of a place: a control
// entry whole, an instruction file, and the rows nested in a directory.
func (sc *scanner) topEntry(root, name string, isDir bool) {
	p := root + "/" + name
	switch controlfiles.Top(name) {
	case controlfiles.RunsCode:
		sc.tree(p, 0)
		return
	case controlfiles.Instructs:
		sc.record(p, roleInstruct)
		return
	}
	if !isDir {
		return
	}
	for _, e := range controlfiles.Nested(name) {
		r := roleInstruct
		if e.Class == controlfiles.RunsCode {
			r = roleControl
		}
		sc.record(root+"/"+e.Path, r)
	}
}
