// Package jsonv1 is version 1 of the JSON document that tells a program
// how a sandboxed command went: its outcome, what the sandbox was refused
// (each refusal with the stable id of the setting that allows it, its flag
// and its Config field) and which enforcement layers were active. `moat
// run --report-json` writes it; the server and MCP reuse it. The shape is
// documented in docs/report-json.md, with a JSON Schema beside it.
//
// Version 1 only grows: a field may be added, never renamed, removed or
// given another meaning. A reader should ignore fields it does not know.
package jsonv1

// Version is the "version" of the documents this package writes.
const Version = 1

// Document is one report. The zero value is not a valid document: Version
// must be 1 and Refusals non-nil (New gives both).
type Document struct {
	// Version is always 1 here.
	Version int `json:"version"`
	// MoatVersion is moat's module version, "devel" for a source build.
	MoatVersion string `json:"moat_version"`
	// Command is the moat subcommand: "run", "exec", "python" or "shell".
	Command string `json:"command"`
	// WorkDir is the sandbox's working directory on the host; empty when
	// moat failed before it had one.
	WorkDir string `json:"workdir"`
	// Started reports whether the command was started in the sandbox.
	Started bool `json:"started"`
	// Outcome says how the command, and moat, ended.
	Outcome Outcome `json:"outcome"`
	// Refusals lists what the sandbox was refused and what moat undid at
	// its end, oldest first, every one (the "moat:" lines stop at 10).
	// Empty, never null, when there were none.
	Refusals []Refusal `json:"refusals"`
	// Report lists the enforcement layers; nil (null) when moat failed
	// before it made the sandbox.
	Report *Report `json:"report"`
}

// Outcome is how the run ended. The zero value is a run that exited 0
// having started at the zero time.
type Outcome struct {
	// ExitCode is moat's own exit status: the command's code, 128+N after
	// signal N, or moat's 2 (usage), 125 (moat failed), 126 (cannot
	// execute), 127 (not found).
	ExitCode int `json:"exit_code"`
	// CommandExitCode is the code the command exited with; nil when it
	// was not started or a signal ended it.
	CommandExitCode *int `json:"command_exit_code"`
	// Signal is the signal that ended the command, like "SIGKILL"; empty
	// for none.
	Signal string `json:"signal"`
	// SignalNumber is Signal's number; 0 for none.
	SignalNumber int `json:"signal_number"`
	// Limit names the limit that ended the command: "memory", "disk",
	// "disk-inodes", "cpu-time", "file-size" or "timeout"; empty when
	// none did. Its refusal, of kind "limit", is in Refusals.
	Limit string `json:"limit"`
	// Reason says why moat ended the command, in words; empty when the
	// command ended by itself.
	Reason string `json:"reason"`
	// Error is moat's own error line, without "moat: ", when moat failed
	// or refused to run the command; empty otherwise.
	Error string `json:"error"`
	// ErrorKind classifies Error: "usage" (exit 2), "failure" (125),
	// "cannot-execute" (126), "not-found" (127); empty when Error is.
	ErrorKind string `json:"error_kind"`
	// StartedAt is when moat began the subcommand, RFC 3339 in UTC.
	StartedAt string `json:"started_at"`
	// DurationMS is how long, in milliseconds, from StartedAt to the end
	// of the sandbox's Close.
	DurationMS int64 `json:"duration_ms"`
}

// Refusal is one thing the sandbox was refused, as [moat.Refusal] says it,
// with the setting that allows it spelled out. The zero value is an empty
// refusal that nothing allows.
type Refusal struct {
	// Kind is short and stable: "dns", "network", "exec", "limit",
	// "socket", "git-control", "control-path" and the like.
	Kind string `json:"kind"`
	// Subject is what was refused: a host name, a path, a limit's name.
	Subject string `json:"subject"`
	// Detail says what happened, in words.
	Detail string `json:"detail"`
	// Setting is the stable id of the setting that allows it, like
	// "network.allow-domain"; empty when nothing should.
	Setting string `json:"setting"`
	// Flag is the CLI flag of Setting, like "--allow-domain"; empty with
	// Setting.
	Flag string `json:"flag"`
	// ConfigField is the library's field for Setting, like
	// "Config.Network"; empty with Setting.
	ConfigField string `json:"config_field"`
	// Value is what to give Flag, when the refusal says (a host name, an
	// address, "unlimited"); empty when the user must choose.
	Value string `json:"value"`
	// Args are the command-line arguments that would allow it, ready to
	// add, like ["--network", "allow-list", "--allow-domain", "pypi.org"];
	// empty, never null, when a value must be chosen or nothing allows it.
	Args []string `json:"args"`
	// Allow is the same, in the words the "moat:" line ends with.
	Allow string `json:"allow"`
}

// Report is the sandbox's [moat.Report]. The zero value reports nothing.
type Report struct {
	// Platform is the operating system, like "linux".
	Platform string `json:"platform"`
	// Enforcement is "strict" or "best-effort".
	Enforcement string `json:"enforcement"`
	// Layers lists every layer moat knows for the platform, active or
	// not; never null.
	Layers []Layer `json:"layers"`
	// Gaps lists, in words, what this host does not enforce; never null.
	Gaps []string `json:"gaps"`
}

// Layer is one enforcement mechanism. The zero value is an unnamed,
// inactive layer.
type Layer struct {
	// Name is short and stable, like "landlock" or "seccomp".
	Name string `json:"name"`
	// Active reports whether the layer is enforced.
	Active bool `json:"active"`
	// Detail says what the layer does here, or why it is inactive.
	Detail string `json:"detail"`
}
