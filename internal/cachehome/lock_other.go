//go:build !unix

package cachehome

import (
	"errors"
	"os"
)

// Supported says whether this platform keeps caches; elsewhere [Open]
// fails and the caller gives the run a throwaway home.
const Supported = false

var errUnsupported = errors.New("cache homes: not supported on this platform")

type lockFile struct{}

func tryLock(string) (*lockFile, error)          { return nil, errUnsupported }
func (*lockFile) release()                       {}
func (*lockFile) removeAndRelease()              {}
func openNoFollow(path string) (*os.File, error) { return os.Open(path) }
func ownedByMe(os.FileInfo) bool                 { return false }

// appendNoFollow opens path for appending; stores are not kept here.
func appendNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
}
