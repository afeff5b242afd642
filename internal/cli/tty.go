package cli

import (
	"os"

	"github.com/creack/pty"
	"golang.org/x/term"
)

// syncSize gives the pty master the size of the terminal on in, now and
// whenever it changes, until the returned stop is called. Without a
// terminal the pty gets a conventional 80x24.
func syncSize(in, master *os.File) (stop func()) {
	if !term.IsTerminal(int(in.Fd())) {
		_ = pty.Setsize(master, &pty.Winsize{Rows: 24, Cols: 80})
		return func() {}
	}
	resize := func() { _ = pty.InheritSize(in, master) }
	resize()
	return onResize(resize)
}

// makeRaw puts the terminal on in, if it is one, into raw mode, so that
// keys reach the sandboxed shell unprocessed, and returns what restores it.
func makeRaw(in *os.File) (restore func()) {
	fd := int(in.Fd())
	if !term.IsTerminal(fd) {
		return func() {}
	}
	state, err := term.MakeRaw(fd)
	if err != nil {
		return func() {}
	}
	return func() { _ = term.Restore(fd, state) }
}
