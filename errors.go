package moat

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrUnsupported is matched by [errors.Is] for every [*UnsupportedError].
var ErrUnsupported = errors.New("unsupported on this host")

// ErrClosed is returned when a closed [Sandbox] is asked to run a command.
var ErrClosed = errors.New("sandbox is closed")

// ErrGrantRedirected is matched by [errors.Is] when a granted path, or a
// directory on the way to it, has become a symbolic link, or is no longer
// the object that was checked, so honouring the grant would follow the link
// somewhere else.
var ErrGrantRedirected = errors.New("grant redirected")

// ErrUnsafeWorkDir is matched by [errors.Is] when [New] or [CheckWorkDir]
// refuses a supplied working directory because writing in it would change
// what runs later outside the sandbox (a home's shell rc files, ~/.local/bin,
// a directory on PATH) or the system itself. [Config.AllowHomeWorkDir] lifts
// the first kind; nothing lifts the second.
var ErrUnsafeWorkDir = errors.New("unsafe working directory")

// ErrInvalidConfig is matched by [errors.Is] for every [*ConfigError]: a
// Config that [Config.Validate] refuses.
var ErrInvalidConfig = errors.New("invalid config")

// ConfigError is a field of a [Config] that [Config.Validate] refuses. Its
// message reads
//
//	nice 20: want 0 (unchanged) through 19; priority can only be lowered
//
// It matches [ErrInvalidConfig]. The zero value is not useful.
type ConfigError struct {
	// Field names the field as the message does: "nice", "io priority",
	// "isolation", "enforcement", "env", "env passthrough", "grant" or
	// "limits: open files", "limits: memory", "limits: processes",
	// "limits: file size", "limits: disk", "limits: disk inodes" or
	// "limits: cpu time" or "deny tcp connect".
	Field string
	// Value is the refused value as the message spells it: 20, "NOVALUE".
	Value string
	// Problem says what is wrong, without the field and the value.
	Problem string
}

// Error returns the one-line message.
func (e *ConfigError) Error() string {
	return e.Field + " " + e.Value + ": " + e.Problem
}

// Is makes errors.Is(err, ErrInvalidConfig) true.
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// PlaceError is a working directory, grant or audit log path that moat
// refuses before creating anything. It reads `workdir "/": problem`.
// It matches [ErrUnsafeWorkDir] when writing there would change what runs
// later outside the sandbox, and [ErrGrantRedirected] when the path leads
// through a symbolic link. [ResolvePaths] names a path it cannot resolve
// with the subject "path". The zero value names nothing.
type PlaceError struct {
	// Subject is what was refused: "workdir", "grant" or "audit log".
	Subject string
	// Path is the path as the caller wrote it.
	Path string
	// Problem says why, in a few words.
	Problem string
	// Err is the cause, such as [fs.ErrNotExist], that [errors.Is] and
	// [errors.As] see; nil when Problem is all there is.
	Err error

	unsafe     bool // matches ErrUnsafeWorkDir
	redirected bool // matches ErrGrantRedirected
}

// Error returns the one-line message.
func (e *PlaceError) Error() string {
	return e.Subject + " " + strconv.Quote(e.Path) + ": " + e.Problem
}

// Is makes errors.Is(err, ErrUnsafeWorkDir) true for an unsafe working
// directory, and errors.Is(err, ErrGrantRedirected) for a path that leads
// through a symbolic link moat does not follow.
func (e *PlaceError) Is(target error) bool {
	return (e.unsafe && target == ErrUnsafeWorkDir) || (e.redirected && target == ErrGrantRedirected)
}

// Unwrap returns the cause, if any.
func (e *PlaceError) Unwrap() error { return e.Err }

// UnsupportedError says that the host cannot enforce part of a policy. It is
// returned under [Strict] enforcement instead of running with less isolation
// than asked for. The zero value names nothing missing.
type UnsupportedError struct {
	// Missing lists what the host lacks, one item each, such as
	// "landlock: not available (kernel 5.10)".
	Missing []string
}

// Error lists what is missing and names the way to run anyway.
func (e *UnsupportedError) Error() string {
	return "host cannot enforce the policy: " + strings.Join(e.Missing, "; ") +
		" (use best-effort enforcement to run anyway)"
}

// Is makes errors.Is(err, ErrUnsupported) true.
func (e *UnsupportedError) Is(target error) bool { return target == ErrUnsupported }

// errorf formats an error in moat's "subject: problem" style, wrapping
// with %w. Only the outermost caller, the moat command, adds "moat: ".
func errorf(format string, args ...any) error {
	return fmt.Errorf(format, args...)
}

func itoa(i int64) string { return strconv.FormatInt(i, 10) }

// SettingError is an error that one setting would lift or that concerns
// one setting. It carries the setting's stable id (the ids of
// docs/report-json.md, such as "home" or "workdir.allow-home") as data, so
// that each front end names the setting its own way: Err's message names
// it by its Config field, and the moat command adds the flag. errors.Is
// and errors.As see Err. The zero value wraps nothing and names no
// setting.
type SettingError struct {
	// Setting is the id of the setting, from internal/settings' table.
	Setting string
	// Err is the error; its message names the setting by its Config
	// field, once.
	Err error
}

// Error returns Err's message.
func (e *SettingError) Error() string {
	if e.Err == nil {
		return e.Setting
	}
	return e.Err.Error()
}

// Unwrap returns Err.
func (e *SettingError) Unwrap() error { return e.Err }

// settingError marks err, whose message names the setting id by its
// Config field, as concerning that setting.
func settingError(id string, err error) error {
	return &SettingError{Setting: id, Err: err}
}

// UnsupportedSettingError is a setting that this platform cannot honour at
// all, so that [New] refuses the sandbox, whatever the enforcement, rather
// than run it more restricted or more open than asked: permissive isolation
// on Windows, for instance, which an AppContainer cannot give. Its message
// reads
//
//	isolation permissive: not available on windows: an AppContainer cannot make the whole filesystem writable; ...
//
// It matches [ErrUnsupported]. The zero value names nothing.
type UnsupportedSettingError struct {
	// Platform is the operating system: "windows".
	Platform string
	// Setting and Value are what was asked: "isolation", "permissive".
	Setting, Value string
	// Reason says why the platform cannot, and what to do instead.
	Reason string
}

// Error returns the one-line message.
func (e *UnsupportedSettingError) Error() string {
	return strings.TrimSpace(e.Setting+" "+e.Value) + ": not available on " + e.Platform + ": " + e.Reason
}

// Is makes errors.Is(err, ErrUnsupported) true.
func (e *UnsupportedSettingError) Is(target error) bool { return target == ErrUnsupported }
