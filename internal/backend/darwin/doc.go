// Package darwin is moat's macOS backend: Seatbelt, through
// /usr/bin/sandbox-exec, with a profile that package sbpl writes.
//
// A command starts as
//
//	/usr/bin/sandbox-exec -p PROFILE -D KEY=PATH... -- MOAT-BINARY
//
// in a session of its own, from the command's directory, with an
// environment that holds only the helper's marker. sandbox-exec applies the
// profile and executes moat's own binary inside it (the helper, selected by
// the marker in package reexec's init): the helper reads the command, its
// environment and its limits from a pipe, sets the rlimits, lowers the CPU
// and I/O priority (setpriority, and iopolicysys, the system call behind
// setiopolicy_np), starts a watcher that kills the command's process group
// when moat goes away, tells moat it is ready and executes the command. The
// process keeps its PID throughout, so Cmd.Process is the command, it
// leads its own process group, signals sent to that group reach it, and its
// exit status is its own. macOS enforces no memory rlimit, so moat's own
// process adds up each command's process group's physical footprint every
// 50 ms and kills the group past the limit.
//
// Files without a build tag here are pure (the profile's input, the wire
// format, the report) and tested on every OS; the *_darwin.go files run the
// commands.
package darwin
