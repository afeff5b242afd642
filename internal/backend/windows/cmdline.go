package windows

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// ErrCommandLine is matched by errors.Is for every argument vector that
// cannot be passed to a Windows program unchanged.
var ErrCommandLine = errors.New("command line: cannot be passed unchanged")

type cmdlineError struct{ arg, problem string }

func (e *cmdlineError) Error() string {
	return "command line: argument " + strconvQuote(e.arg) + ": " + e.problem
}

func (e *cmdlineError) Is(target error) bool { return target == ErrCommandLine }

// strconvQuote quotes s for a message without importing strconv's escaping
// of backslashes, which would double every separator of a Windows path.
func strconvQuote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// ComposeCommandLine joins args into the one command line that
// CreateProcess takes, such that CommandLineToArgvW, and the Microsoft C
// runtime's parser, give back exactly args: the rules of
// windows.ComposeCommandLine and windows.EscapeArg (golang.org/x/sys),
// with every argument that holds a space, a tab, another control
// character, or nothing at all, put in quotes. A backslash is doubled only
// in a run that ends at a quote, inserted or escaped.
//
// Some vectors have no such command line, and are refused rather than
// changed (an error matching ErrCommandLine): none at all; a NUL, which
// ends the command line; text that is not UTF-8, which the UTF-16
// conversion would replace; and a quote in the program name, which its
// parser cannot escape (and no Windows file name holds).
func ComposeCommandLine(args []string) (string, error) {
	if len(args) == 0 {
		return "", &cmdlineError{"", "no program name"}
	}
	for _, a := range args {
		if strings.IndexByte(a, 0) >= 0 {
			return "", &cmdlineError{a, "holds a NUL, which ends a Windows command line"}
		}
		if !utf8.ValidString(a) {
			return "", &cmdlineError{a, "not valid UTF-8"}
		}
	}
	prog := args[0]
	if strings.IndexByte(prog, '"') >= 0 {
		return "", &cmdlineError{prog, "a quote in the program name cannot be escaped"}
	}
	var b strings.Builder
	if needsQuotes(prog) {
		b.WriteString(`"` + prog + `"`)
	} else {
		b.WriteString(prog)
	}
	for _, a := range args[1:] {
		b.WriteByte(' ')
		b.WriteString(EscapeArg(a))
	}
	return b.String(), nil
}

// needsQuotes reports whether s must be quoted to stay one argument: it
// is empty, or holds a space, a tab or another control character.
func needsQuotes(s string) bool {
	if s == "" {
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] == 0x7f {
			return true
		}
	}
	return false
}

// EscapeArg is one argument after the program name, escaped so that
// CommandLineToArgvW gives it back: quoted when needsQuotes says so,
// every quote preceded by a backslash, and every run of backslashes that
// ends at a quote (escaped or closing) doubled.
func EscapeArg(s string) string {
	quote := needsQuotes(s)
	if !quote && !strings.ContainsRune(s, '"') {
		return s
	}
	var b strings.Builder
	if quote {
		b.WriteByte('"')
	}
	slashes := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			slashes++
		case '"':
			b.WriteString(strings.Repeat(`\`, slashes+1))
			slashes = 0
		default:
			slashes = 0
		}
		b.WriteByte(c)
	}
	if quote {
		b.WriteString(strings.Repeat(`\`, slashes))
		b.WriteByte('"')
	}
	return b.String()
}

// batchSafe are the bytes an argument to a batch file may hold: cmd.exe
// parses a .bat or .cmd file's command line again, with its own rules
// (% and ! expand variables, ^ & | < > ( ) are operators, and its quoting
// does not follow CommandLineToArgvW), so only text that means the same
// to both parsers is passed.
func batchSafe(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	case c >= 0x80: // UTF-8 bytes of letters outside ASCII
		return true
	}
	return strings.IndexByte(`-_.:\/+@#~$[]{}'`, c) >= 0
}

// IsBatch reports whether path names a batch file, which CreateProcess
// runs through cmd.exe.
func IsBatch(path string) bool {
	p := strings.ToLower(strings.TrimRight(path, ". "))
	return strings.HasSuffix(p, ".bat") || strings.HasSuffix(p, ".cmd")
}

// CheckBatchArgs refuses, for a batch file, every argument that cmd.exe
// would read differently from the program's other parsers (BatBadBut,
// CVE-2024-24576): anything beyond letters, digits and -_.:\/+@#~$[]{}'.
// Other programs are not checked. An error matches ErrCommandLine.
func CheckBatchArgs(path string, args []string) error {
	if !IsBatch(path) {
		return nil
	}
	for _, a := range args[1:] {
		if a == "" {
			return &cmdlineError{a, "an empty argument cannot be passed to a batch file unchanged"}
		}
		for i := 0; i < len(a); i++ {
			if !batchSafe(a[i]) {
				return &cmdlineError{a, "cmd.exe would reinterpret " + strconvQuote(a[i:i+1]) + " in an argument to a batch file"}
			}
		}
	}
	return nil
}
