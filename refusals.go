package moat

import "github.com/moat-sandbox/moat/internal/refusal"

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
