package spec

// FS is the filesystem policy beyond the working directory and grants:
// what Config.Deny, ReadOnly, Seal, VirtualFiles and HideProc ask for,
// checked and resolved. The zero value adds nothing.
type FS struct {
	// Deny are paths the sandbox may neither read, write nor execute,
	// beating the level and the grants of parents; a grant at or inside
	// one wins. Each is absolute and clean, and a path reached through a
	// symbolic link is listed again as its canonical target.
	Deny []string
	// ReadOnly are paths inside writable places that stay readable but
	// not writable; missing ones cannot be created, except control names
	// at the top of a place, which Close moves aside.
	ReadOnly []string
	// Seal are directories whose entries created after the sandbox was
	// built get no access at all.
	Seal []string
	// Virtual are read-only files that exist only in the sandbox's mount
	// namespace, sorted by path.
	Virtual []VirtualFile
	// HideProc leaves /proc out of the sandbox.
	HideProc bool
}

// Empty reports whether f asks for nothing.
func (f *FS) Empty() bool {
	return len(f.Deny)+len(f.ReadOnly)+len(f.Seal)+len(f.Virtual) == 0 && !f.HideProc
}

// VirtualFile is one read-only file shown at Path with Content. The zero
// value names none.
type VirtualFile struct {
	Path    string
	Content []byte
}
