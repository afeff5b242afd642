package jsonv1

import (
	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/settings"
)

// New returns a document for the moat subcommand command, with Version set
// and empty lists.
func New(moatVersion, command string) Document {
	return Document{Version: Version, MoatVersion: moatVersion, Command: command, Refusals: []Refusal{}}
}

// FromRefusal converts r, spelling out its setting from the settings
// table.
func FromRefusal(r moat.Refusal) Refusal {
	out := Refusal{Kind: r.Kind, Subject: r.Subject, Detail: r.Detail, Allow: r.Allow, Args: []string{}}
	if s, ok := settings.Lookup(r.Setting); ok {
		out.Setting, out.Flag, out.ConfigField, out.Value = s.ID, s.Flag, s.Field, r.Value
		if a := s.Args(r.Value); a != nil {
			out.Args = a
		}
	}
	return out
}

// FromRefusals converts rs, in order; empty, never nil, for none.
func FromRefusals(rs []moat.Refusal) []Refusal {
	out := make([]Refusal, 0, len(rs))
	for _, r := range rs {
		out = append(out, FromRefusal(r))
	}
	return out
}

// FromReport converts r.
func FromReport(r moat.Report) *Report {
	out := &Report{Platform: r.Platform, Enforcement: r.Enforcement.String(), Layers: []Layer{}, Gaps: []string{}}
	for _, l := range r.Layers {
		out.Layers = append(out.Layers, Layer{Name: l.Name, Active: l.Active, Detail: l.Detail})
	}
	out.Gaps = append(out.Gaps, r.Gaps...)
	return out
}

// SetExit fills what e says of how the command ended: its own code or
// the signal that ended it, and the limit and reason when moat ended it.
// ExitCode is left to the caller, which knows moat's own statuses.
func (o *Outcome) SetExit(e *moat.ExitError) {
	o.Limit, o.Reason = e.Limit(), e.Reason()
	if sig := e.Signal(); sig != nil {
		o.Signal, o.SignalNumber = signalName(sig)
		return
	}
	if e.ProcessState != nil {
		code := e.ExitCode()
		o.CommandExitCode = &code
	}
}

// SetExited records that the command exited by itself with code.
func (o *Outcome) SetExited(code int) { o.CommandExitCode = &code }
