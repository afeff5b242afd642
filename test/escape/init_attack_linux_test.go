//go:build linux

package escape_test

import (
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
)

// TestInitKillsForkingLeftovers: the raw init (helper_init_linux.go)
// kills every leftover process once no command runs. A leftover that
// forks as fast as it can races that kill; none may survive into the
// next command. Control: while the command runs, its daemon is seen.
func TestInitKillsForkingLeftovers(t *testing.T) {
	sb := newSandbox(t, moat.Config{Isolation: moat.IsolationDefault})
	r := sh(t, sb, `setsid sh -c 'while :; do (sleep 30 &) ; done' >/dev/null 2>&1 &
sleep 0.5; ps -eo comm | grep -c sleep`)
	if strings.TrimSpace(r.Stdout) == "0" || r.Code != 0 {
		t.Fatalf("control: the forking daemon did not run: %s", r)
	}
	time.Sleep(500 * time.Millisecond)
	r = sh(t, sb, `ps -eo pid,comm | grep -v -e ' ps$' -e ' sh$' -e ' grep$' -e PID -e '^ *1 '`)
	if strings.TrimSpace(r.Stdout) != "" {
		t.Fatalf("leftover processes survived into the next command: %s", r)
	}
}
