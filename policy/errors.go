package policy

import "strconv"

// Error is a mistake in a config file: which file, which line, and what
// is wrong. Its message reads
//
//	config "moat.toml": line 7: unknown key "grantz"
//
// The zero value is not useful.
type Error struct {
	// File is the file's name as given to [Load] or [Parse].
	File string
	// Line is the 1-based line of the mistake, or 0 when it concerns the
	// whole file, as when it cannot be read.
	Line int
	// Err says what is wrong, without the file and line.
	Err error
}

// Error returns the one-line message.
func (e *Error) Error() string {
	s := "config " + strconv.Quote(e.File) + ": "
	if e.Line > 0 {
		s += "line " + strconv.Itoa(e.Line) + ": "
	}
	return s + e.Err.Error()
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }
