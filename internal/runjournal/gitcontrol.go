package runjournal

import (
	"path/filepath"

	"github.com/moat-sandbox/moat/internal/gitguard"
)

// Git control paths created during a run.
//
// Read-only binds (Linux, with a mount namespace) keep the git control
// paths that exist at start unchanged for the whole run, but nothing in
// the kernel stops a sandbox from creating new ones where it may write: a
// repository in a subdirectory, a .git file pointing at a hidden git
// directory, a bare repository, a commondir or info/attributes in an
// existing git directory. So New records the control paths of the
// writable places (internal/gitguard lists them), and Close, once every
// process of the sandbox is dead, moves aside whatever the run created or
// changed there, puts back the original of a changed file, and reports
// each as a Refusal of kind "git-control" ("control-path" for the other
// tools' control files of internal/controlfiles). A repository the run
// made keeps its objects, refs, index and history: only its control
// paths move, and its config is cut to its inert keys. Files that
// instruct a host agent (AGENTS.md, ...) are reported, kind
// "agent-instructions", and left. Nothing is deleted.

// snapshotGit records the git control paths of the writable places; New
// calls it before any command can run.
func (run *Run) snapshotGit() {
	if places := run.places; len(places) > 0 {
		run.snap = gitguard.Take(places)
		run.reportNamed(run.snap) // gitnamed.go
	}
}

// quarantineSuffix is what a neutralised control path's name gets.
func (run *Run) quarantineSuffix() string { return ".moat-quarantine-" + run.id }

// CheckGit neutralises the git control paths the run created or changed
// and reports each; the sandbox's Close calls it once no sandboxed process
// is left. creatable, when above zero, bounds the directories the check
// reads beyond those New saw (what the run's commands could make); zero
// leaves the snapshot's own bound. A nil Run checks nothing.
func (run *Run) CheckGit(creatable int64) {
	if run == nil {
		return
	}
	if creatable > 0 {
		run.snap.SetCreatable(creatable)
	}
	for _, f := range run.quarantineFindings(run.snap.Check(run.quarantineSuffix())) { // quarantine.go
		kind := "git-control"
		if f.Kind != "" {
			kind = f.Kind // agent-instructions
		} else if gitguard.IsControlName(filepath.Base(f.Path)) && f.MovedTo != "" {
			kind = "control-path" // internal/controlfiles: .envrc, .vscode, .moat-*, ...
		}
		run.refuse(Found{Kind: kind, Subject: f.Path, Detail: f.Detail})
	}
}
