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

// UnsupportedError says that the host cannot enforce part of a policy. It is
// returned under [Strict] enforcement instead of running with less isolation
// than asked for. The zero value names nothing missing.
type UnsupportedError struct {
	// Missing lists what the host lacks, one item each, such as
	// "landlock: not available (kernel 5.10)".
	Missing []string
}

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
