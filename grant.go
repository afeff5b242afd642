package moat

import "strings"

// Access is what a sandbox may do with a granted path. WRITE and EXEC each
// include READ. The zero value grants nothing and is invalid in a [Grant].
type Access uint8

const (
	// READ allows reading files and listing directories.
	READ Access = 1 << iota
	// WRITE allows creating, changing and removing files. It implies READ
	// and, alone, never allows executing what is written.
	WRITE
	// EXEC allows executing files. It implies READ. WRITE|EXEC on one path
	// is the only way to give up write-xor-execute for that path.
	EXEC
)

// normalize adds the READ that WRITE and EXEC imply.
func (a Access) normalize() Access {
	if a&(WRITE|EXEC) != 0 {
		a |= READ
	}
	return a
}

// CanWrite reports whether a allows writing.
func (a Access) CanWrite() bool { return a&WRITE != 0 }

// CanExec reports whether a allows executing.
func (a Access) CanExec() bool { return a&EXEC != 0 }

// String prints "r", "rw", "rx" or "rwx"; the zero value prints "-".
func (a Access) String() string {
	a = a.normalize()
	if a == 0 {
		return "-"
	}
	var b strings.Builder
	b.WriteByte('r')
	if a.CanWrite() {
		b.WriteByte('w')
	}
	if a.CanExec() {
		b.WriteByte('x')
	}
	return b.String()
}

// Grant gives the sandbox Access to Path and, for a directory, to everything
// beneath it. The zero value is invalid.
type Grant struct {
	// Path is absolute and clean.
	Path string
	// Access is what the sandbox may do there.
	Access Access
}
