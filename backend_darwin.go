package moat

import (
	"github.com/moat-sandbox/moat/internal/backend/darwin"
	_ "github.com/moat-sandbox/moat/internal/reexec" // helper role dispatch
	"github.com/moat-sandbox/moat/internal/spec"
)

// prestarted is a backend helper started before the policy is known;
// macOS has none: each command's sandbox-exec starts with the command.
type prestarted = *struct{}

// prestartBackend starts nothing here.
func prestartBackend() prestarted { return nil }

// newBackend is macOS's backend: sandbox-exec with a Seatbelt profile
// written by internal/sbpl.
func newBackend(p spec.Policy, _ prestarted) (spec.Backend, error) {
	e, err := darwin.New(p, darwin.Options{AllowTCCPrompts: p.AllowTCCPrompts})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// closePrestarted has nothing to end here.
func closePrestarted(prestarted) {}
