package cachehome

import "errors"

// ErrNoIdentity is returned by [Identify] where the file system keeps
// neither a directory's birth time nor its inode generation: a directory
// removed and made again at the same path could then not be told from
// the old one, so its runs keep no caches (a throwaway home).
var ErrNoIdentity = errors.New("cache homes: the file system cannot tell this directory from one made before it at the same path")
