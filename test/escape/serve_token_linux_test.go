//go:build linux

package escape_test

import (
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/session"
	"github.com/moat-sandbox/moat/policy"
)

// No session's command can read the server's token file, at every
// isolation level, with and without namespaces. The control is the host
// reading it.
func TestServeTokenUnreadableFromSandbox(t *testing.T) {
	probe := func(t *testing.T) {
		levels := []moat.Isolation{moat.IsolationStrict, moat.IsolationDefault, moat.IsolationPermissive}
		a := startAPI(t, func(string) []session.Policy {
			var ps []session.Policy
			for _, l := range levels {
				ps = append(ps, servePolicy(t, l.String(), nil, policy.Layer{Isolation: &l}))
			}
			return ps
		})
		for _, l := range levels {
			id := a.session(t, l.String(), true)
			attack(t, l.String(), func(t *testing.T, lifted bool) result {
				if lifted {
					return onHost(t, "cat", a.ls.TokenFile)
				}
				return a.runIn(t, id, "cat", a.ls.TokenFile)
			}, func(r result) bool { return !strings.Contains(r.Stdout, a.token) })
		}
	}
	t.Run("namespaces", probe)
	t.Run("no namespaces", func(t *testing.T) { withoutNamespaces(t, probe) })
}
