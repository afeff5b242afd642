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

// saveTerminals records the modes (termios) of each terminal among std's
// streams and returns what puts them back: a command given the terminal
// itself (moat run) can switch off echo or line editing, and moat shell
// makes it raw. The restore runs on every way out of moat's command
// function: a normal end, an error, a caught signal (moat relays them and
// returns), a panic. A terminal that cannot be read is left alone. Modes
// are set only where they changed, with SIGTTOU ignored meanwhile, so a
// moat in a background job is not stopped for putting them back.
func saveTerminals(std stdio) (restore func()) {
	type saved struct {
		fd    int
		state *term.State
	}
	var all []saved
	var seen []os.FileInfo
	for _, f := range []*os.File{std.in, std.out, std.err} {
		if f == nil || !term.IsTerminal(int(f.Fd())) {
			continue
		}
		fi, err := f.Stat()
		if err != nil {
			continue
		}
		dup := false
		for _, s := range seen {
			dup = dup || os.SameFile(s, fi)
		}
		if dup {
			continue
		}
		st, err := term.GetState(int(f.Fd()))
		if err != nil {
			continue
		}
		seen = append(seen, fi)
		all = append(all, saved{int(f.Fd()), st})
	}
	return func() {
		for _, s := range all {
			if now, err := term.GetState(s.fd); err == nil && *now == *s.state {
				continue // unchanged: no call that a background moat would be stopped for
			}
			withoutTTOU(func() { _ = term.Restore(s.fd, s.state) })
		}
	}
}
