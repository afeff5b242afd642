package linux

import (
	"fmt"
	"os"
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
func (t *tracer) mark(name string) {
	if t.start.IsZero() {
		return
	}
	now := time.Now()
	t.parts = append(t.parts, fmt.Sprintf("%s %.2fms", name, float64(now.Sub(t.last).Microseconds())/1000))
	t.last = now
}

// print writes the trace as one line.
func (t *tracer) print() {
	if t.start.IsZero() {
		return
	}
	fmt.Fprintf(os.Stderr, "moat: trace: %s; total %.2fms\n", strings.Join(t.parts, ", "),
		float64(time.Since(t.start).Microseconds())/1000)
}
