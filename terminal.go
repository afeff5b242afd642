package moat

import "os"

// OpenTerminal returns a new pseudo-terminal for an interactive command:
// pass slave as the command's Stdin, Stdout and Stderr with Setctty, and
// use master for the other side. Where the sandbox has its own /dev/pts the
// pair is made there, so the command finds its terminal by name; ok is
// false when the platform leaves it to the caller (open a host pty then).
func (s *Sandbox) OpenTerminal() (master, slave *os.File, ok bool, err error) {
	m, sl, ok, err := s.backend.OpenTerminal()
	if err != nil {
		return nil, nil, false, errorf("terminal: %w", err)
	}
	return m, sl, ok, nil
}
