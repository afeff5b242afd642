package linux

import (
	"github.com/moat-sandbox/moat/internal/spec"
	"golang.org/x/sys/unix"
)

// The supervisor's record of what the sandbox was refused, kept until moat
// asks for it (zygoteProc.serve, commandSpec.Refusals). A sandbox chooses
// what it is refused, as often as it likes, so the record is bounded for the
// sandbox's whole life: each refusal is kept once, at most maxRefusals of
// each kind, each subject cut to maxRefusalSubject bytes and those of a kind
// together to maxRefusalBytes, so that a reply fits in one control message
// (maxMessage) even when JSON escapes every byte.

// Kinds of refusedCall: internal/spec's.
const (
	refusedUnixSocket = spec.RefusedUnixSocket // a host Unix socket, by path (the socket guard)
	refusedExec       = spec.RefusedExec       // an exec that write-xor-execute refuses
	refusedSocket     = spec.RefusedSocket     // a socket family or type the filter refuses
)

// maxRefusals bounds the refusals of one kind a supervisor keeps, for its
// whole life: a sandbox that tries many paths or families is reported for
// the first ones.
const maxRefusals = 64

// maxRefusalSubject bounds one subject, in bytes; maxRefusalBytes bounds
// the subjects and details of one kind, together. JSON writes a byte as at
// most six (\u00XX): three kinds stay under 110 KiB, within maxMessage.
const (
	maxRefusalSubject = 1 << 10
	maxRefusalBytes   = 6 << 10
)

// refusalKind is what one kind of refusal holds of its bounds.
type refusalKind struct {
	count int
	bytes int
}

// refusedCall is one refusal the supervisor recorded.
type refusedCall struct {
	Kind    string `json:"kind"`
	Subject string `json:"subject"`
	Detail  string `json:"detail,omitempty"`
}

// refuse records r unless it is already recorded or a bound is reached,
// and tells the init that there are refusals to collect.
func (g *sockGuard) refuse(r refusedCall) {
	if len(r.Subject) > maxRefusalSubject {
		r.Subject = r.Subject[:maxRefusalSubject] + "..."
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.seen == nil {
		g.seen = map[refusedCall]bool{}
		g.kinds = map[string]*refusalKind{}
	}
	k := g.kinds[r.Kind]
	if k == nil {
		k = new(refusalKind)
		g.kinds[r.Kind] = k
	}
	size := len(r.Subject) + len(r.Detail)
	if g.seen[r] || k.count >= maxRefusals || k.bytes+size > maxRefusalBytes {
		return
	}
	g.seen[r] = true
	k.count++
	k.bytes += size
	g.refused = append(g.refused, r)
	if g.notify >= 0 {
		// Before the caller learns of the refusal, so before its
		// command can end and moat ask the init.
		_, _ = unix.Write(g.notify, []byte{initRefused})
	}
}

// drain returns the refusals recorded since the last call. What it
// returns stays counted against the bounds: a refusal is reported once.
func (g *sockGuard) drain() []refusedCall {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := g.refused
	g.refused = nil
	return out
}
