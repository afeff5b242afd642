//go:build linux

package escape_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

// ptyProbe opens ptys until one fails or 400 are open and prints how many.
const ptyProbe = `import os
n = 0
fds = []
try:
    while n < 400:
        fds.append(os.openpty())
        n += 1
except OSError as e:
    print("ERR", e.errno)
print("OPENED", n)
`

// TestDevptsMax is limits F4: each pty holds tty buffers no memory sum
// counts, and one of the host-wide kernel.pty.max. The sandbox's devpts
// is mounted with max=256: a 257th pty fails. Control: on the host the
// same probe opens 400.
func TestDevptsMax(t *testing.T) {
	t.Parallel()
	need(t, "python3")
	opened := func(r result) int {
		_, s, _ := strings.Cut(r.Stdout, "OPENED ")
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			t.Fatalf("probe output: %s", r)
		}
		return n
	}
	sb := newSandbox(t, moat.Config{})
	n := opened(inSandbox(t, sb, "python3", "-c", ptyProbe))
	t.Logf("the sandbox opened %d ptys", n)
	if n > 256 {
		t.Fatalf("the sandbox opened %d ptys, want at most 256", n)
	}
	if n := opened(onHost(t, "python3", "-c", ptyProbe)); n < 400 {
		t.Fatalf("control: the host opened only %d ptys", n)
	}
}
