//go:build !linux

package moat

import (
	"runtime"

	"github.com/moat-sandbox/moat/internal/spec"
)

// newBackend reports that this platform's backend is not built yet.
func newBackend(spec.Policy) (spec.Backend, error) {
	return nil, errUnsupportedOS
}

func defaultMemoryBytes() int64 { return 8 << 30 }

func defaultOpenFiles() int64 { return DefaultOpenFiles }

func exited(int) bool { return true }

func freeBytes(string) (int64, error) { return 0, errUnsupportedOS }

var errUnsupportedOS = &UnsupportedError{Missing: []string{runtime.GOOS + ": backend not implemented yet"}}
