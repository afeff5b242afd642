package moat

import (
	"math"
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

// gitSnapshot is the state of the git control paths at New.
type gitSnapshot = gitguard.Snapshot

// gitPlaces are the places whose content outlives the sandbox: a supplied
// working directory and the writable grants. An automatic working
// directory is removed by Close, so nothing in it can run later.
func (s *Sandbox) gitPlaces() []string {
	var out []string
	if !s.autoDir && s.workDir != "" {
		out = append(out, s.workDir)
	}
	for _, g := range s.cfg.Grants {
		if g.Access&WRITE != 0 {
			out = append(out, g.Path)
		}
	}
	return out
}

// snapshotGit records the git control paths of the writable places; New
// calls it before any command can run.
func (s *Sandbox) snapshotGit() {
	if places := s.gitPlaces(); len(places) > 0 {
		s.gitSnap = gitguard.Take(places)
		s.reportNamed(s.gitSnap) // gitnamed.go
	}
}

// quarantineSuffix is what a neutralised control path's name gets.
func (s *Sandbox) quarantineSuffix() string { return ".moat-quarantine-" + s.id }

// checkGit neutralises the git control paths the run created or changed
// and records each; Close calls it once no sandboxed process is left.
func (s *Sandbox) checkGit() {
	if s.disk.Inodes() > 0 {
		// Every command had that many inodes to make directories with:
		// the check reads as many more directories as New saw.
		n, w := s.disk.Inodes(), max(s.disk.Watches(), 1)
		if n > math.MaxInt64/w {
			n = math.MaxInt64
		} else {
			n *= w
		}
		s.gitSnap.SetCreatable(n)
	}
	for _, f := range s.quarantineFindings(s.gitSnap.Check(s.quarantineSuffix())) { // controljournal.go
		kind := "git-control"
		if f.Kind != "" {
			kind = f.Kind // agent-instructions
		} else if gitguard.IsControlName(filepath.Base(f.Path)) && f.MovedTo != "" {
			kind = "control-path" // internal/controlfiles: .envrc, .vscode, .moat-*, ...
		}
		s.addRefusal(Refusal{Kind: kind, Subject: f.Path, Detail: f.Detail})
	}
}
