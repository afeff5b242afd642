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
//
// What the bounds keep out is not lost without a trace: each kind counts
// the refusals it did not record, and the next drain reports the count as
// one entry (refusedCall.Dropped), so moat says that refusals went
// unrecorded. And a sandbox cannot hide a refusal that matters behind
// many harmless ones: the first refusal of each network socket class
// (AF_INET, AF_INET6 or AF_PACKET, by type) is kept even past the bounds.

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

// refusalKind is what one kind of refusal holds of its bounds, and how
// many refusals past them it did not record since the last drain.
type refusalKind struct {
	count   int
	bytes   int
	dropped int
}

// refusedCall is one refusal the supervisor recorded. With Dropped set it
// is a count instead: that many refusals of Kind were not recorded, and
// Subject and Detail are empty.
type refusedCall struct {
	Kind    string `json:"kind"`
	Subject string `json:"subject"`
	Detail  string `json:"detail,omitempty"`
	Dropped int    `json:"dropped,omitempty"`
}

// refuse records r unless it is already recorded, or a bound is reached
// (then it is counted), and tells the init that there are refusals to
// collect.
func (g *sockGuard) refuse(r refusedCall) { g.refuseClass(r, "") }

// refuseClass is refuse, and when class is not empty and no refusal of
// that class was recorded yet, records r even past the bounds. The caller
// keeps the classes few and their text short (socketClass).
func (g *sockGuard) refuseClass(r refusedCall, class string) {
	if len(r.Subject) > maxRefusalSubject {
		r.Subject = r.Subject[:maxRefusalSubject] + "..."
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.seen == nil {
		g.seen = map[refusedCall]bool{}
		g.kinds = map[string]*refusalKind{}
		g.classes = map[string]bool{}
	}
	k := g.kinds[r.Kind]
	if k == nil {
		k = new(refusalKind)
		g.kinds[r.Kind] = k
	}
	size := len(r.Subject) + len(r.Detail)
	if g.seen[r] {
		return
	}
	full := k.count >= maxRefusals || k.bytes+size > maxRefusalBytes
	if full && (class == "" || g.classes[class]) {
		k.dropped++
		if k.dropped == 1 {
			g.tellInit()
		}
		return
	}
	if class != "" {
		g.classes[class] = true
	}
	g.seen[r] = true
	if !full {
		k.count++
		k.bytes += size
	}
	g.refused = append(g.refused, r)
	g.tellInit()
}

// tellInit tells the init there are refusals to collect.
func (g *sockGuard) tellInit() {
	if g.notify >= 0 {
		// Before the caller learns of the refusal, so before its
		// command can end and moat ask the init.
		_, _ = unix.Write(g.notify, []byte{initRefused})
	}
}

// drain returns the refusals recorded since the last call, then for each
// kind that dropped some since, their count. What it returns stays
// counted against the bounds: a refusal is reported once.
func (g *sockGuard) drain() []refusedCall {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := g.refused
	g.refused = nil
	for _, kind := range []string{refusedUnixSocket, refusedExec, refusedSocket} {
		if k := g.kinds[kind]; k != nil && k.dropped > 0 {
			out = append(out, refusedCall{Kind: kind, Dropped: k.dropped})
			k.dropped = 0
		}
	}
	return out
}

// socketClass is the class of a refused socket whose first refusal is
// kept past the bounds: one per network family and known type, so at
// most 18, each text short and moat's own; "" for any other.
func socketClass(domain, typ int32) string {
	switch domain {
	case unix.AF_INET, unix.AF_INET6, unix.AF_PACKET:
	default:
		return ""
	}
	t := typ & 0xf
	if _, ok := socketTypes[t]; !ok {
		return ""
	}
	return socketFamilies[domain] + " " + socketTypes[t]
}
