package hostinput

import (
	"fmt"
	"strconv"
	"strings"
)

// Error is a host input refused. Its message reads
//
//	SUBJECT "PATH": PROBLEM; FIX
//
// The zero value is an unnamed refusal.
type Error struct {
	// Subject names what the file is for: "config", "policy document".
	Subject string
	// Path is the file as given.
	Path string
	// Problem says why a sandbox could have written it.
	Problem string
	// Trustable is true when "moat trust PATH" lifts the refusal.
	Trustable bool
}

// Error returns the one-line message, naming the fix.
func (e *Error) Error() string {
	fix := "move it out of every sandbox's reach"
	if e.Trustable {
		fix += ", or, once you have read it, pin this content with: moat trust " + quoteArg(e.Path)
	}
	return fmt.Sprintf("%s %s: %s; %s", e.Subject, strconv.Quote(e.Path), e.Problem, fix)
}

// Reason is the message without its subject and path: the problem and
// the fix.
func (e *Error) Reason() string {
	msg := e.Error()
	return msg[len(e.Subject)+1+len(strconv.Quote(e.Path))+2:]
}

// quoteArg quotes s for a shell when it holds anything but plain
// characters: in single quotes, or Go-quoted when it holds a character
// that is not printable (the message stays one line).
func quoteArg(s string) string {
	if q := strconv.Quote(s); q[1:len(q)-1] != s {
		return q
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/.-_+,:@", r)) {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	if s == "" {
		return "''"
	}
	return s
}
