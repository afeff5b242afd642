package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// processStart is when this package was initialised: as close to the
// program's start as the CLI can see.
var processStart = time.Now()

// hostTrace times the host's side of `moat run` when MOAT_TRACE=1 (the
// sandbox's helper prints its own side on the command's stderr): from the
// program's start to the Config, New, the command's start, its exit, and
// Close. The zero value, or a nil one, records nothing.
type hostTrace struct {
	last  time.Time
	marks []string
}

// newHostTrace returns a trace when MOAT_TRACE=1, else nil.
func newHostTrace() *hostTrace {
	if os.Getenv("MOAT_TRACE") != "1" {
		return nil
	}
	return &hostTrace{last: processStart}
}

// mark records the time since the previous mark under name.
func (t *hostTrace) mark(name string) {
	if t == nil {
		return
	}
	now := time.Now()
	t.marks = append(t.marks, fmt.Sprintf("%s %.2fms", name, float64(now.Sub(t.last).Microseconds())/1000))
	t.last = now
}

// print writes the trace as one line.
func (t *hostTrace) print(w io.Writer) {
	if t == nil {
		return
	}
	fmt.Fprintf(w, "moat: trace: host: %s; total %.2fms\n", strings.Join(t.marks, ", "), float64(time.Since(processStart).Microseconds())/1000)
}
