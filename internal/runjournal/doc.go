// Package runjournal keeps the run journal, its crash sweep and the
// quarantine, and the git control check of a sandbox's writable places.
//
// A sandbox may create a control name (.git, .agents, .pi, .moat-*,
// .heimdall-*) at the top of a place it may write, and the engine may
// create placeholders on the host for missing denied paths. Close undoes
// both; a moat killed before Close (SIGKILL, a crash, a power cut) would
// leave them, and a planted .moat-write would widen the next run there. So
// New, before any command runs, writes a journal of the run (0600, in the
// user's moat state directory, which no sandbox can read or write): its
// owner (PID, start time, PID namespace, boot ID), each writable place
// with the control names present at start, and each missing denied path
// the engine may guard with a placeholder. Close deletes it once it has
// undone the run. Every New first sweeps the journals whose owner is
// dead: what those runs created is moved to the quarantine, their
// placeholders removed, and each reported as a Refusal of kind
// "control-path". Nothing that existed at the dead run's start is
// touched, and nothing is deleted: a control entry the sandbox created
// is moved (a rename, or a copy then removal across file systems) to
// STATE/quarantine/ID/PLACE/NAME, PLACE being the place's path escaped.
package runjournal
