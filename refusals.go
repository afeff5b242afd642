package moat

import (
	"github.com/moat-sandbox/moat/internal/paths"
	"github.com/moat-sandbox/moat/internal/refusal"
)

// Refusal is one thing the sandbox was refused, or one thing moat undid at
// the end of a run, said so that a person, or the model behind an agent, can
// fix the next try (internal/refusal). The zero value is an empty refusal
// that says nothing.
type Refusal = refusal.Refusal

// Refusals returns what the sandbox was refused so far, and what moat undid
// or neutralised when it closed, oldest first. Call it again after
// [Sandbox.Close] to see what Close found. Nil means nothing.
func (s *Sandbox) Refusals() []Refusal { return s.refused.Snapshot() }

// addRefusal records r for [Sandbox.Refusals].
func (s *Sandbox) addRefusal(r Refusal) { s.refused.Add(r) }

// writtenPlace reports whether path lies where the sandbox writes: the
// working directory, its private temp and home (workdir.go), a writable
// grant. Build mode, the pre-start checks and the IPC shims judge paths by
// it.
func (s *Sandbox) writtenPlace(path string) bool {
	places := append([]string{s.workDir}, s.privateRoots()...)
	for _, g := range s.cfg.Grants {
		if g.Access.CanWrite() {
			places = append(places, g.Path)
		}
	}
	return paths.UnderAny(path, places)
}
