package moat

import "strings"

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
