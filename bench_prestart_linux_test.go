//go:build linux

package moat_test

import (
	"testing"

	"github.com/moat-sandbox/moat"
)

// BenchmarkPreStartCheck is the cost of the checks every command start
// now runs first (Cmd.Check, which Start runs too): for a plain command,
// and for one with toolchain variables and paths on its command line.
// Compare it with BenchmarkSandboxTrue, a whole warm start.
func BenchmarkPreStartCheck(b *testing.B) {
	cases := []struct {
		name string
		env  []string
		args []string
	}{
		{name: "plain", args: []string{"/bin/true"}},
		{name: "bare name", args: []string{"true"}},
		{name: "variables and paths",
			env:  []string{"GOMODCACHE=/var/tmp/moat-bench-none/mod", "GOCACHE=/usr/lib/go-cache", "PYTHONPATH=/usr/lib/python3/dist-packages:/opt/x:/srv/y", "PATH=/usr/local/bin:/usr/bin:/bin"},
			args: []string{"/bin/cat", "/etc/hostname", "/etc/passwd", "/usr/share/dict/words"}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			sb := newSandbox(b, moat.Config{Isolation: moat.IsolationDefault, Env: moat.Env{Set: tc.env}})
			for b.Loop() {
				sb.Command(tc.args[0], tc.args[1:]...).Check()
			}
		})
	}
}
