package moat

import (
	"github.com/moat-sandbox/moat/internal/backend/linux"
	_ "github.com/moat-sandbox/moat/internal/reexec" // helper role dispatch
	"github.com/moat-sandbox/moat/internal/spec"
)

// prestarted is a backend helper started before the policy is known.
type prestarted = *linux.Spawned

// prestartBackend starts the sandbox's zygote ahead, so that its exec and
// Go runtime overlap New's own work; nil when it cannot.
func prestartBackend() prestarted { return linux.Prespawn() }

// newBackend is Linux's backend: Landlock, seccomp, namespaces, cgroups.
// It owns pre, which it uses or closes.
func newBackend(p spec.Policy, pre prestarted) (spec.Backend, error) {
	e, err := linux.New(p)
	if err != nil {
		pre.Close()
		return nil, err
	}
	e.Adopt(pre)
	if err := e.BuildNow(); err != nil { // a filesystem policy fixes what exists at New
		e.Close()
		return nil, startError(err)
	}
	return e, nil
}

// closePrestarted ends a helper started ahead that no backend took.
func closePrestarted(pre prestarted) { pre.Close() }
