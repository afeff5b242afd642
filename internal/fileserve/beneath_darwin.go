package fileserve

// openDir opens dir beneath the place through os.Root, which walks each
// component with O_NOFOLLOW and refuses ".." or a link that would leave it.
func (pl *place) openDir(dir string) (int, error) { return pl.rootOpen(dir) }

// fdPath is not asked on macOS: paths with ".." are shown cleaned.
func fdPath(int) (string, bool) { return "", false }
