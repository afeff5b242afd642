package refusal

import "github.com/moat-sandbox/moat/internal/settings"

// Refusal is one thing the sandbox was refused, or one thing moat undid at
// the end of a run, said so that a person, or the model behind an agent, can
// fix the next try. The zero value is an empty refusal that says nothing.
type Refusal struct {
	// Kind is short and stable: "dns", "network", "exec", "limit",
	// "socket", "git-control", and so on.
	Kind string
	// Subject is what was refused: a host name, a path, a limit's name.
	Subject string
	// Detail says what happened, in words.
	Detail string
	// Allow names the flag (and Config field) that would allow it, in
	// words; empty when nothing should. moat derives it from Setting and
	// Value when it records the refusal.
	Allow string
	// Setting is the stable id of the setting that allows it, such as
	// "build", "network.allow-domain" or "limits.memory" (see the
	// report-json document for the list); empty when nothing should.
	Setting string
	// Value is what to give Setting's flag to allow it, when the refusal
	// says: a host name for "network.allow-domain", an address for
	// "network.allow-local", "unlimited" for a limit that could not be
	// measured. Empty when the user must choose (a size, a duration).
	Value string
}

// Derived returns r with Allow worded from Setting and Value, so that the
// words and the id never disagree; r as it is when Setting is empty.
func Derived(r Refusal) Refusal {
	if r.Setting != "" {
		r.Allow = settings.Allow(r.Setting, r.Value)
	}
	return r
}

// String renders r as one line without the "moat: " prefix.
func (r Refusal) String() string {
	s := r.Kind + ": " + r.Subject
	if r.Detail != "" {
		s += ": " + r.Detail
	}
	if r.Allow != "" {
		s += " (" + r.Allow + ")"
	}
	return s
}
