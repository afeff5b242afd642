//go:build !windows

package paths

import "testing"

// Under is asked about lists of hundreds of protected paths: it must not
// allocate, whatever the lengths.
func TestUnderDoesNotAllocate(t *testing.T) {
	p, dir := "/home/someone/with/a/rather/long/path/to/a/file", "/home/someone/with/a/rather/long/path"
	if n := testing.AllocsPerRun(100, func() { Under(p, dir) }); n != 0 {
		t.Errorf("Under allocates %v times", n)
	}
}
