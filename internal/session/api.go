package session

// This file holds the types shared by the session core and its faces
// (internal/serve, internal/mcpserver).

import (
	"io"
	"time"

	"github.com/moat-sandbox/moat/internal/report/jsonv1"
	"github.com/moat-sandbox/moat/policy"
)

// Policy is one named policy a server serves, read once at the server's
// start and pinned: Result is never re-read from its file. The zero value
// is unusable.
type Policy struct {
	// Name is how clients choose it: lower-case letters, digits, '-' and
	// '_', at most 64 bytes.
	Name string
	// Source names where it came from, for the server's log and the
	// policy listing ("moat run's defaults", a file path).
	Source string
	// Result is the merged, checked settings; each session resolves its
	// own copy (a fresh working directory unless Result names one).
	Result policy.Result
}

// Narrowing is what a client may ask of a policy: only less. Every field's
// zero value keeps the policy's setting.
type Narrowing struct {
	// Network "deny" drops the network; "allow-list" with AllowDomains
	// keeps only those of the policy's allowed domains. Empty keeps it.
	Network      string   `json:"network,omitempty"`
	AllowDomains []string `json:"allow_domains,omitempty"`
	// Grants maps a grant's absolute path, as the policy resolves it, to
	// the access kept: "none" drops it, or one of "r", "rw", "rx", "rwx"
	// within the policy's (writing and executing include reading).
	Grants map[string]string `json:"grants,omitempty"`
	// Limits lower the policy's limits; each must be at most the policy's
	// (any value when the policy's is unlimited). Zero keeps it.
	Limits NarrowLimits `json:"limits,omitempty"`
	// Isolation may only be stricter: "strict" or "default". Empty keeps.
	Isolation string `json:"isolation,omitempty"`
	// NoBuild turns build mode off. False keeps the policy's.
	NoBuild bool `json:"no_build,omitempty"`
}

// NarrowLimits are lowered limits. Zero keeps the policy's.
type NarrowLimits struct {
	MemoryBytes   int64 `json:"memory_bytes,omitempty"`
	Processes     int64 `json:"processes,omitempty"`
	DiskBytes     int64 `json:"disk_bytes,omitempty"`
	FileSizeBytes int64 `json:"file_size_bytes,omitempty"`
	CPUSeconds    int64 `json:"cpu_seconds,omitempty"`
	TimeoutMS     int64 `json:"timeout_ms,omitempty"`
}

// Options bound a Manager. Zero values mean the defaults documented on
// each field.
type Options struct {
	// Policies are the named policies served; at least one.
	Policies []Policy
	// MaxSessions bounds live sessions; 0 means 64.
	MaxSessions int
	// MaxTotalMemory bounds the sum of live sessions' memory limits; 0
	// means the host's memory.
	MaxTotalMemory int64
	// SessionMemory is the memory limit of a session whose policy sets
	// none; 0 means an eighth of the host's memory, at least 512 MiB.
	// (moat run's own default, half the host's memory, would let two
	// sessions take the whole budget.)
	SessionMemory int64
	// IdleTimeout closes a session with no call for this long; 0 means
	// 15 minutes.
	IdleTimeout time.Duration
	// MaxLifetime closes a session this long after it was made; 0 means
	// 8 hours.
	MaxLifetime time.Duration
	// WarmPool is how many ready sandboxes of each policy (un-narrowed)
	// are kept; 0 means 1, negative means none.
	WarmPool int
	// OutputCap bounds the output a background process keeps (per
	// stream, the newest bytes) and what a run returns unstreamed; 0
	// means 1 MiB.
	OutputCap int
	// SessionOutputCap bounds the output all background processes of a
	// session keep together, both streams: each process keeps the newest
	// bytes of each stream up to an equal share of it (and at most
	// OutputCap), and a new process shrinks the others' shares, dropping
	// their oldest bytes (counted as dropped). 0 means 16 MiB.
	SessionOutputCap int64
	// MaxTotalOutput bounds the output the background processes of all
	// sessions keep together: each session's budget is SessionOutputCap,
	// or an equal part of this among the live sessions where that is
	// less, so a new session shrinks the others' and the oldest bytes are
	// dropped, never refused. 0 means 256 MiB.
	MaxTotalOutput int64
	// Log receives one line per session event; nil discards.
	Log io.Writer
	// DenyTCPPorts are the host's TCP ports that no session's command may
	// connect to or bind (the server's own listener): they go to each
	// session's moat.Config.DenyTCPConnect. Nil denies none.
	DenyTCPPorts []uint16
}

// CreateRequest asks for a session.
type CreateRequest struct {
	// Policy names one of Options.Policies; empty means the only one, or
	// the one named "default".
	Policy string `json:"policy,omitempty"`
	// Name is the client's label for the session; empty is allowed.
	Name   string    `json:"name,omitempty"`
	Narrow Narrowing `json:"narrow,omitempty"`
}

// Info describes a session. Times are RFC 3339 in UTC.
type Info struct {
	ID        string  `json:"id"`
	Name      string  `json:"name"`
	Policy    string  `json:"policy"`
	WorkDir   string  `json:"workdir"`
	Created   string  `json:"created"`
	LastUsed  string  `json:"last_used"`
	ExpiresAt string  `json:"expires_at"`
	Allows    Summary `json:"allows"`
}

// Summary says what a session's policy allows, for a tool description or
// a listing: the words come from the settings, never from sandbox data.
type Summary struct {
	Network   string            `json:"network"`   // "none", "allow-list", "all", "host"
	Domains   []string          `json:"domains"`   // allowed host patterns; never null
	Writable  []string          `json:"writable"`  // the working directory first, then writable grants
	Readable  []string          `json:"readable"`  // read-only grants
	Build     bool              `json:"build"`     // files written may be executed
	Isolation string            `json:"isolation"` // strict, default, permissive
	Limits    map[string]string `json:"limits"`    // limit name -> value in words
}

// RunRequest is one command to run to completion.
type RunRequest struct {
	Argv []string `json:"argv"`
	// Env adds NAME=VALUE entries over the sandbox's environment.
	Env map[string]string `json:"env,omitempty"`
	// Cwd is the working directory: a path inside the sandbox's view,
	// relative to the working directory; empty means the working directory.
	Cwd string `json:"cwd,omitempty"`
	// Stdin is given to the command, then end of file; empty means none.
	Stdin []byte `json:"stdin,omitempty"`
	// Timeout kills the command's process tree; 0 means the policy's
	// timeout, or none.
	Timeout time.Duration `json:"-"`
}

// Stream names an output stream: "stdout" or "stderr".
type Stream string

// Output receives a command's output as it comes; data is only valid
// during the call. A nil Output discards it (the result keeps the first
// OutputCap bytes of each stream).
type Output func(s Stream, data []byte)

// RunResult is how a command ended.
type RunResult struct {
	// ExitCode is the command's exit status; -1 when a signal ended it.
	ExitCode int `json:"exit_code"`
	// Signal names the signal that ended it ("KILL"); empty when it exited.
	Signal string `json:"signal,omitempty"`
	// TimedOut is true when the timeout ended it.
	TimedOut bool `json:"timed_out"`
	// Limit names the limit that ended it, in words; empty when none did.
	Limit string `json:"limit,omitempty"`
	// Stdout and Stderr are the first OutputCap bytes, when not streamed.
	Stdout          []byte `json:"stdout"`
	Stderr          []byte `json:"stderr"`
	StdoutTruncated bool   `json:"stdout_truncated"`
	StderrTruncated bool   `json:"stderr_truncated"`
	// Refusals are those the sandbox recorded while this command ran.
	Refusals   []jsonv1.Refusal `json:"refusals"`
	DurationMS int64            `json:"duration_ms"`
}

// StartRequest is a background process to start.
type StartRequest struct {
	Argv []string          `json:"argv"`
	Env  map[string]string `json:"env,omitempty"`
	Cwd  string            `json:"cwd,omitempty"`
}

// Proc describes a background process.
type Proc struct {
	ID       string   `json:"id"` // "p1", "p2"... within the session
	Argv     []string `json:"argv"`
	PID      int      `json:"pid"`
	State    string   `json:"state"` // "running" or "exited"
	ExitCode *int     `json:"exit_code,omitempty"`
	Signal   string   `json:"signal,omitempty"`
	Started  string   `json:"started"`
}

// ProcOutput is a background process's output from an offset on.
type ProcOutput struct {
	Proc   Proc  `json:"process"`
	Stdout Chunk `json:"stdout"`
	Stderr Chunk `json:"stderr"`
}

// Chunk is part of a stream: Data starts at byte Offset of everything the
// process wrote, Next is the offset to ask for next, and Dropped counts
// bytes that fell out of the kept window before they were read.
type Chunk struct {
	Data    []byte `json:"data"`
	Offset  int64  `json:"offset"`
	Next    int64  `json:"next"`
	Dropped int64  `json:"dropped"`
}

// FileInfo describes a file in a session's view.
type FileInfo struct {
	Path   string `json:"path"` // as the sandbox sees it, absolute
	Name   string `json:"name"`
	Type   string `json:"type"` // "file", "dir", "symlink", "fifo", "socket", "device", "other"
	Size   int64  `json:"size"`
	Mode   string `json:"mode"` // octal permission bits, like "0644"
	MTime  string `json:"mtime"`
	Target string `json:"target,omitempty"` // a symlink's target, as data; never followed
}

// Error is a refusal or failure of the session API, with a stable code.
// The zero value is not used.
type Error struct {
	// Code is stable: see the Code* constants.
	Code string
	// Message says what went wrong in words a model can act on. Any
	// sandbox-made text in it (a path) is quoted with %q.
	Message string
	// Setting names the policy setting involved, when one is.
	Setting string
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Error codes. The HTTP face maps each to one status.
const (
	CodeBadRequest    = "bad_request"       // 400: malformed or unknown fields
	CodeNotFound      = "not_found"         // 404: no such session, process or file
	CodeUnknownPolicy = "unknown_policy"    // 404
	CodeWiden         = "widen_refused"     // 403: the request asks for more than the policy allows
	CodePathRefused   = "path_refused"      // 403: outside the working directory and writable grants, or through a link out
	CodeNotRegular    = "not_regular_file"  // 409: a FIFO, device, socket or directory where a file was expected
	CodeTooLarge      = "too_large"         // 413
	CodeTooMany       = "too_many_sessions" // 429
	CodeMemoryBudget  = "memory_budget"     // 429: the sessions' memory limits would pass MaxTotalMemory
	CodeBusy          = "busy"              // 409
	CodeClosed        = "session_closed"    // 410
	CodeStart         = "start_failed"      // 422: the command could not be started (not found, not executable)
	CodeInternal      = "internal"          // 500
)

// PolicyInfo lists a served policy.
type PolicyInfo struct {
	Name   string  `json:"name"`
	Source string  `json:"source"`
	Allows Summary `json:"allows"`
}
