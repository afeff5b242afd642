package moat

// ParseAccess parses a mode written as r, rw, rx or rwx. The letters may
// come in any order ("xr" is rx), each at most once, and r is required,
// since no platform can make a path writable or executable but unreadable.
func ParseAccess(s string) (Access, error) {
	if s == "" {
		return 0, errorf("access %q: empty; want r, rw, rx or rwx", s)
	}
	var a Access
	for _, c := range s {
		var bit Access
		switch c {
		case 'r':
			bit = READ
		case 'w':
			bit = WRITE
		case 'x':
			bit = EXEC
		default:
			return 0, errorf("access %q: unknown letter %q; want r, rw, rx or rwx", s, c)
		}
		if a&bit != 0 {
			return 0, errorf("access %q: letter %q given twice", s, c)
		}
		a |= bit
	}
	if a&READ == 0 {
		return 0, errorf("access %q: missing r; write it as %s", s, (a | READ).String())
	}
	return a, nil
}
