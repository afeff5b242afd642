package session

// A placeholder of the file API, which h-files replaces with files*.go.

import (
	"errors"
	"os"

	"github.com/moat-sandbox/moat"
)

// Files is the file API of one session. The zero value refuses every call.
type Files struct{}

// Place is a directory the file API may reach: the working directory or a
// grant. The zero value names nothing.
type Place struct {
	Path     string
	Writable bool
}

// FileLimits bound the file API. Zero values mean the defaults.
type FileLimits struct {
	MaxFileBytes, MaxReadBytes int64
	MaxEntries                 int
}

var errNoFiles = &Error{Code: CodeInternal, Message: "the file API is not built yet"}

// StartFiles starts the file API of sb: here, not yet.
func StartFiles(sb *moat.Sandbox, places []Place, lim FileLimits) (*Files, error) {
	return nil, errors.New("session: the file API is not built yet")
}

// Read reads a file.
func (f *Files) Read(path string, max int64) ([]byte, FileInfo, error) {
	return nil, FileInfo{}, errNoFiles
}

// Write replaces a file.
func (f *Files) Write(path string, data []byte, mode os.FileMode) (FileInfo, error) {
	return FileInfo{}, errNoFiles
}

// List lists a directory; the bool says it was truncated.
func (f *Files) List(path string) ([]FileInfo, bool, error) { return nil, false, errNoFiles }

// Stat describes a path.
func (f *Files) Stat(path string) (FileInfo, error) { return FileInfo{}, errNoFiles }

// Close stops the file API.
func (f *Files) Close() error { return nil }
