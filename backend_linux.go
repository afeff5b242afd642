package moat

import (
	"github.com/moat-sandbox/moat/internal/backend/linux"
	_ "github.com/moat-sandbox/moat/internal/reexec" // helper role dispatch
	"github.com/moat-sandbox/moat/internal/spec"
)

// newBackend is Linux's backend: Landlock, seccomp, namespaces, cgroups.
func newBackend(p spec.Policy) (spec.Backend, error) {
	e, err := linux.New(p)
	if err != nil {
		return nil, err
	}
	return e, nil
}
