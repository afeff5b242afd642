package moat

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrUnsupported is matched by [errors.Is] for every [*UnsupportedError].
var ErrUnsupported = errors.New("moat: unsupported on this host")

// ErrClosed is returned when a closed [Sandbox] is asked to run a command.
var ErrClosed = errors.New("moat: sandbox is closed")

// ErrGrantRedirected is matched by [errors.Is] when a granted path, or a
// directory on the way to it, has become a symbolic link, or is no longer
// the object that was checked, so honouring the grant would follow the link
// somewhere else.
var ErrGrantRedirected = errors.New("moat: grant redirected")

// ErrUnsafeWorkDir is matched by [errors.Is] when [New] or [CheckWorkDir]
// refuses a supplied working directory because writing in it would change
// what runs later outside the sandbox (a home's shell rc files, ~/.local/bin,
// a directory on PATH) or the system itself. [Config.AllowHomeWorkDir] lifts
// the first kind; nothing lifts the second.
var ErrUnsafeWorkDir = errors.New("moat: unsafe working directory")

// ErrInvalidConfig is matched by [errors.Is] for every [*ConfigError]: a
// Config that [Config.Validate] refuses.
var ErrInvalidConfig = errors.New("moat: invalid config")

// ConfigError is a field of a [Config] that [Config.Validate] refuses. Its
// message reads
//
//	moat: nice 20: want 0 (unchanged) through 19; priority can only be lowered
//
// It matches [ErrInvalidConfig]. The zero value is not useful.
type ConfigError struct {
	// Field names the field as the message does: "nice", "io priority",
	// "isolation", "enforcement", "env", "env passthrough", "grant" or
	// "limits: open files", "limits: memory", "limits: processes",
	// "limits: file size", "limits: disk", "limits: disk inodes" or
	// "limits: cpu time".
	Field string
	// Value is the refused value as the message spells it: 20, "NOVALUE".
	Value string
	// Problem says what is wrong, without the field and the value.
	Problem string
}

// Error returns the one-line message.
func (e *ConfigError) Error() string {
	return "moat: " + e.Field + " " + e.Value + ": " + e.Problem
}

// Is makes errors.Is(err, ErrInvalidConfig) true.
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// PlaceError is a working directory, grant or audit log path that moat
// refuses before creating anything. It reads `moat: workdir "/": problem`.
// It matches [ErrUnsafeWorkDir] when writing there would change what runs
// later outside the sandbox. The zero value names nothing.
type PlaceError struct {
	// Subject is what was refused: "workdir", "grant" or "audit log".
	Subject string
	// Path is the path as the caller wrote it.
	Path string
	// Problem says why, in a few words.
	Problem string

	unsafe bool
}

// Error returns the one-line message.
func (e *PlaceError) Error() string {
	return "moat: " + e.Subject + " " + strconv.Quote(e.Path) + ": " + e.Problem
}

// Is makes errors.Is(err, ErrUnsafeWorkDir) true for an unsafe working
// directory.
func (e *PlaceError) Is(target error) bool { return e.unsafe && target == ErrUnsafeWorkDir }

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
	return "moat: host cannot enforce the policy: " + strings.Join(e.Missing, "; ") +
		" (use best-effort enforcement to run anyway)"
}

// Is makes errors.Is(err, ErrUnsupported) true.
func (e *UnsupportedError) Is(target error) bool { return target == ErrUnsupported }

// errorf formats an error in moat's "moat: subject: problem" style.
func errorf(format string, args ...any) error {
	return fmt.Errorf("moat: "+format, args...)
}

func itoa(i int64) string { return strconv.FormatInt(i, 10) }
