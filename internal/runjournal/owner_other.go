//go:build !linux

package runjournal

import "os"

// selfOwner identifies this process for a journal; without /proc only by
// PID, so that no journal of it is ever judged dead.
func selfOwner() runOwner { return runOwner{Pid: os.Getpid()} }

// ownerDead cannot tell here: a journal's owner counts as alive.
func ownerDead(runOwner) bool { return false }

// sweepDenyPlaceholder: no backend here makes placeholders.
func sweepDenyPlaceholder(string) bool { return false }

// sweepGitPlaceholders: no backend here makes placeholders.
func sweepGitPlaceholders(string) []string { return nil }
