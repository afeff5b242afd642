package aclplan

import (
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Windows paths are handled here as strings, with no help from
// path/filepath, so that the planner behaves the same on every host it is
// built for and its golden tests run on Linux.
//
// A path is accepted only in one spelling that means exactly one object:
// absolute (a drive, X:\..., or a share, \\server\share\...), separated by
// backslashes, with no empty, "." or ".." component, no alternate data
// stream (a colon past the drive), no component ending in a dot or a space
// (Win32 strips them, so "secret." names "secret"), no DOS device name
// (CON, NUL, COM1, ...), and no wildcard. NTFS compares names without
// case, so every comparison the planner makes goes through Key: a
// protection of C:\Users\me\.ssh covers c:\USERS\ME\.SSH.

// ErrPath is matched by errors.Is for every path the planner refuses.
var ErrPath = errors.New("acl plan: path refused")

type pathError struct{ path, problem string }

func (e *pathError) Error() string {
	return "acl plan: path " + quote(e.path) + ": " + e.problem
}

func (e *pathError) Is(target error) bool { return target == ErrPath }

// quote is strconv.Quote without the import's escaping of backslashes,
// which would double every separator of a Windows path in a message.
func quote(s string) string { return `"` + s + `"` }

// Canonical checks that p is an absolute Windows path in its one accepted
// spelling (see the package comment) and returns it, with an
// extended-length prefix (\\?\ or \\?\UNC\) removed. An error matches
// ErrPath.
func Canonical(p string) (string, error) {
	if !utf8.ValidString(p) {
		return "", &pathError{p, "not valid UTF-8"}
	}
	if strings.ContainsRune(p, '/') {
		return "", &pathError{p, "want backslashes as separators"}
	}
	q := p
	switch {
	case strings.HasPrefix(q, `\\?\UNC\`):
		q = `\\` + q[len(`\\?\UNC\`):]
	case strings.HasPrefix(q, `\\?\`):
		q = q[len(`\\?\`):]
	case strings.HasPrefix(q, `\\.\`):
		return "", &pathError{p, "a device path, not a file"}
	}
	var root, rest string
	switch {
	case len(q) >= 3 && isLetter(q[0]) && q[1] == ':' && q[2] == '\\':
		root, rest = strings.ToUpper(q[:1])+`:\`, q[3:]
	case strings.HasPrefix(q, `\\`):
		parts := strings.SplitN(q[2:], `\`, 3)
		if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
			return "", &pathError{p, `want \\server\share`}
		}
		for _, c := range parts[:2] {
			if err := checkComponent(p, c); err != nil {
				return "", err
			}
		}
		root = `\\` + parts[0] + `\` + parts[1]
		if len(parts) == 3 {
			if parts[2] == "" {
				return "", &pathError{p, "trailing separator"}
			}
			rest = parts[2]
		}
	default:
		return "", &pathError{p, `want an absolute path (X:\... or \\server\share\...)`}
	}
	if rest == "" {
		return root, nil
	}
	for _, c := range strings.Split(rest, `\`) {
		if err := checkComponent(p, c); err != nil {
			return "", err
		}
	}
	if strings.HasSuffix(root, `\`) {
		return root + rest, nil
	}
	return root + `\` + rest, nil
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// reserved are the DOS device names, which name a device in every
// directory, with any extension.
var reserved = map[string]bool{
	"CON": true, "PRN": true, "AUX": true, "NUL": true, "CONIN$": true, "CONOUT$": true,
	"COM1": true, "COM2": true, "COM3": true, "COM4": true, "COM5": true, "COM6": true, "COM7": true, "COM8": true, "COM9": true,
	"LPT1": true, "LPT2": true, "LPT3": true, "LPT4": true, "LPT5": true, "LPT6": true, "LPT7": true, "LPT8": true, "LPT9": true,
	"COM¹": true, "COM²": true, "COM³": true, "LPT¹": true, "LPT²": true, "LPT³": true,
}

func checkComponent(p, c string) error {
	switch {
	case c == "":
		return &pathError{p, "empty component"}
	case c == "." || c == "..":
		return &pathError{p, "a . or .. component"}
	case strings.HasSuffix(c, ".") || strings.HasSuffix(c, " "):
		return &pathError{p, "a component ending in a dot or a space, which Windows strips"}
	case strings.ContainsAny(c, `:*?"<>|`):
		return &pathError{p, "a colon (alternate data stream), wildcard or quote in a component"}
	}
	for _, r := range c {
		if r < 0x20 {
			return &pathError{p, "a control character in a component"}
		}
	}
	base := c
	if i := strings.IndexByte(base, '.'); i >= 0 {
		base = base[:i]
	}
	if reserved[strings.ToUpper(strings.TrimRight(base, " "))] {
		return &pathError{p, "a DOS device name"}
	}
	return nil
}

// Key is p folded for comparison the way NTFS compares names: two
// canonical paths name the same object when their keys are equal.
func Key(p string) string {
	return strings.Map(unicode.ToUpper, p)
}

// Under reports whether canonical path p is root or lies below it.
func Under(p, root string) bool {
	kp, kr := Key(p), Key(root)
	if kp == kr {
		return true
	}
	if !strings.HasSuffix(kr, `\`) {
		kr += `\`
	}
	return strings.HasPrefix(kp, kr)
}

// IsVolumeRoot reports whether canonical path p is the root of a drive
// (C:\) or of a share (\\server\share).
func IsVolumeRoot(p string) bool {
	if len(p) == 3 && p[1] == ':' && p[2] == '\\' {
		return true
	}
	if strings.HasPrefix(p, `\\`) {
		return strings.Count(p[2:], `\`) == 1
	}
	return false
}

// Parent is the directory holding canonical path p; a volume root is its
// own parent.
func Parent(p string) string {
	if IsVolumeRoot(p) {
		return p
	}
	i := strings.LastIndexByte(p, '\\')
	if i == 2 && p[1] == ':' {
		return p[:3]
	}
	return p[:i]
}

// Extended is canonical path p in the extended-length form that the
// security API is given, so that paths longer than MAX_PATH (260
// characters) work and nothing is normalised again: \\?\C:\... or
// \\?\UNC\server\share\....
func Extended(p string) string {
	if strings.HasPrefix(p, `\\`) {
		return `\\?\UNC\` + p[2:]
	}
	return `\\?\` + p
}
