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

var errUnsupportedOS = &UnsupportedError{Missing: []string{runtime.GOOS + ": backend not implemented yet"}}
