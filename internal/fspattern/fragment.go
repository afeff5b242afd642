package fspattern

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/moat-sandbox/moat/internal/hostinput"
)

// Fragment files hold one pattern a line, like a .gitignore, and are read
// from the working directory only, never from its parents. The JSON lines
// come first, then Heimdall's fragment, then moat's, so moat's has the last
// word.
var (
	// DenyFragments are the deny fragment names, in the order they apply.
	DenyFragments = []string{".heimdall-deny", ".moat-deny"}
	// WriteFragments are the writable fragment names, in the order they
	// apply.
	WriteFragments = []string{".heimdall-write", ".moat-write"}
)

// maxFragment bounds a fragment file's size.
const maxFragment = 1 << 20

// FragmentError is a fragment file that cannot be used. Its message reads
//
//	invalid filesystem fragment PATH: what is wrong
//
// The zero value is not useful.
type FragmentError struct {
	// Path is the fragment file.
	Path string
	// Line is the 1-based line of the mistake; 0 concerns the whole file.
	Line int
	// Err says what is wrong.
	Err error
}

// Error returns the one-line message.
func (e *FragmentError) Error() string {
	s := "invalid filesystem fragment " + quoteOdd(e.Path) + ": "
	if e.Line > 0 {
		s += "line " + strconv.Itoa(e.Line) + ": "
	}
	return s + e.Err.Error()
}

// Unwrap returns Err.
func (e *FragmentError) Unwrap() error { return e.Err }

// Line is one pattern of a fragment. The zero value is no pattern.
type Line struct {
	// Text is the pattern, trailing spaces and carriage return dropped.
	Text string
	// N is its 1-based line number.
	N int
}

// ParseFragment splits a fragment's content into patterns, as git reads a
// .gitignore: blank lines and lines starting with "#" are skipped, "\#"
// and "\!" start a pattern with a literal "#" or "!", trailing spaces are
// dropped unless escaped with "\", and a trailing carriage return is
// dropped. A leading UTF-8 byte order mark is skipped. It refuses a NUL
// byte.
func ParseFragment(data []byte) ([]Line, error) {
	if i := strings.IndexByte(string(data), 0); i >= 0 {
		return nil, errors.New("contains a NUL byte")
	}
	// A UTF-8 byte order mark, as some editors write, is not part of the
	// first pattern.
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var out []Line
	for n, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSuffix(l, "\r")
		l = trimTrailingSpaces(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		out = append(out, Line{Text: l, N: n + 1})
	}
	return out, nil
}

// trimTrailingSpaces drops trailing spaces that are not escaped.
func trimTrailingSpaces(l string) string {
	end := len(l)
	for end > 0 && l[end-1] == ' ' {
		// Count the backslashes before this space.
		bs := 0
		for j := end - 2; j >= 0 && l[j] == '\\'; j-- {
			bs++
		}
		if bs%2 == 1 {
			break
		}
		end--
	}
	return l[:end]
}

// ReadFragment reads the fragment name in dir. A missing file gives no
// lines and no error; anything else that keeps it from being read, such as
// its being a directory, a symbolic link (dangling or not: a fragment is
// trusted like the policy, so it must be the cwd's own file) or larger
// than 1 MiB, is a *FragmentError. So is one that a sandbox of an earlier
// run could have written (store's record; see internal/hostinput), unless
// the user pinned its content.
func ReadFragment(dir, name string, store hostinput.Store) ([]Line, error) {
	p := filepath.Join(dir, name)
	fail := func(err error) ([]Line, error) { return nil, &FragmentError{Path: p, Err: err} }
	fi, err := os.Lstat(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return fail(bareErr(err))
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return fail(errors.New("a symbolic link; a fragment must be a regular file of the working directory"))
	}
	if !fi.Mode().IsRegular() {
		return fail(errors.New("not a regular file"))
	}
	// Read once, without following a link put there since the Lstat and
	// without blocking on a FIFO, checking what was opened.
	in, err := hostinput.Read(p, hostinput.Options{Subject: "fragment", Max: maxFragment, Store: store, TopControl: true})
	if err != nil {
		var he *hostinput.Error
		if errors.As(err, &he) {
			return fail(errors.New(he.Reason()))
		}
		return fail(errors.New(strings.TrimPrefix(err.Error(), "fragment "+strconv.Quote(p)+": ")))
	}
	lines, err := ParseFragment(in.Data)
	if err != nil {
		return fail(err)
	}
	return lines, nil
}

// bareErr strips the operation and path of a *os.PathError.
func bareErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// quoteOdd returns s quoted when it holds a character that is not
// printable (so that no control character reaches a terminal), else s as
// it is.
func quoteOdd(s string) string {
	if q := strconv.Quote(s); q[1:len(q)-1] != s {
		return q
	}
	return s
}
