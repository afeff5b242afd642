package linux

import (
	"fmt"
	"strings"
	"time"
)

// TraceEnv, set to 1 in the parent's environment, makes the helper print
// one line on the command's stderr with the time each layer took.
const TraceEnv = "MOAT_TRACE"

// tracer records the end of each setup phase, relative to the parent's
// start of the helper. The zero value records nothing.
type tracer struct {
	start time.Time
	last  time.Time
	parts []string
}

func newTracer(startUnixNano int64) *tracer {
	if startUnixNano == 0 {
		return &tracer{}
	}
	t := time.Unix(0, startUnixNano)
	return &tracer{start: t, last: t}
}

// mark ends the phase called name.
func (t *tracer) mark(name string) { t.markAt(name, time.Now()) }

// markAt ends the phase called name at when.
func (t *tracer) markAt(name string, when time.Time) {
	if t.start.IsZero() {
		return
	}
	t.parts = append(t.parts, fmt.Sprintf("%s %.2fms", name, float64(when.Sub(t.last).Microseconds())/1000))
	t.last = when
}

// line renders the trace.
func (t *tracer) line(what string) string {
	if t.start.IsZero() {
		return ""
	}
	return fmt.Sprintf("moat: trace: %s: %s; total %.2fms\n", what, strings.Join(t.parts, ", "),
		float64(t.last.Sub(t.start).Microseconds())/1000)
}
