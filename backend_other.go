//go:build !linux && !darwin && !windows

package moat

import (
	"runtime"

	"github.com/moat-sandbox/moat/internal/spec"
)

// prestarted is a backend helper started before the policy is known; this
// platform has none.
type prestarted = *struct{}

// prestartBackend starts nothing here.
func prestartBackend() prestarted { return nil }

// newBackend reports that this platform's backend is not built yet.
func newBackend(spec.Policy, prestarted) (spec.Backend, error) {
	return nil, errUnsupportedOS
}

var errUnsupportedOS = &UnsupportedError{Missing: []string{runtime.GOOS + ": backend not implemented yet"}}

// closePrestarted has nothing to end here.
func closePrestarted(prestarted) {}
