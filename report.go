package moat

import (
	"strings"

	"github.com/moat-sandbox/moat/internal/refusal"
)

// Report says which enforcement layers are really active for a [Sandbox].
// The zero value reports nothing active.
type Report struct {
	// Platform is the operating system, e.g. "linux".
	Platform string
	// Enforcement is the mode the sandbox was created with.
	Enforcement Enforcement
	// Layers lists every layer moat knows for the platform, active or not.
	Layers []Layer
	// Gaps lists, in words, what is not enforced on this host that a host
	// with every feature would enforce.
	Gaps []string
}

// Layer is one enforcement mechanism. The zero value is an unnamed,
// inactive layer.
type Layer struct {
	// Name is short and stable, e.g. "landlock", "seccomp", "namespaces".
	Name string
	// Active reports whether the layer is enforced.
	Active bool
	// Detail says what the layer does here, or why it is inactive.
	Detail string
}

// Active reports whether the layer called name is enforced.
func (r Report) Active(name string) bool {
	for _, l := range r.Layers {
		if l.Name == name {
			return l.Active
		}
	}
	return false
}

// String renders the report one layer a line, for people.
func (r Report) String() string {
	var b strings.Builder
	b.WriteString(r.Platform + " (" + r.Enforcement.String() + ")\n")
	for _, l := range r.Layers {
		mark := "off"
		if l.Active {
			mark = "on "
		}
		b.WriteString("  " + mark + " " + l.Name + ": " + l.Detail + "\n")
	}
	for _, g := range r.Gaps {
		b.WriteString("  gap: " + g + "\n")
	}
	return b.String()
}

// Refusal is one thing the sandbox was refused, or one thing moat undid at
// the end of a run, said so that a person, or the model behind an agent, can
// fix the next try (internal/refusal). The zero value is an empty refusal
// that says nothing.
type Refusal = refusal.Refusal
