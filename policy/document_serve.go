package policy

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/moat-sandbox/moat"
)

// ServeLayer returns the document's settings as a [Layer] for a policy
// that "moat serve" or "moat mcp" pins at start: the network, grants,
// protections, isolation, limits, enforcement and build mode. Relative
// grants and the audit log are placed against dir, the document's own
// directory, and ~/ against home. A session has a working directory of its
// own and no host environment, so a document that sets what only a single
// run in the caller's directory can mean (cwd, stdio, env, filesystem
// patterns, agent sockets, proc) is refused, never half applied: the error
// names the field. The command that every document names is what moat
// exec would run; sessions run what their clients ask, so it is not used.
func (d *Document) ServeLayer(dir, home string) (Layer, error) {
	for _, f := range []struct {
		set  bool
		name string
	}{
		{d.Cwd != "", "cwd"},
		{d.Stdio != "", "stdio"},
		{d.Proc != "", "proc"},
		{len(d.Env.Allow)+len(d.Env.Deny)+len(d.Env.Set) > 0 || d.Env.Blocklist, "env"},
		{len(d.Filesystem.Deny)+len(d.Filesystem.Writable)+len(d.Filesystem.Virtual) > 0 || d.Filesystem.HardLinkGaps != "", "filesystem"},
		{d.SSHAgent || d.GPGAgent || d.AgeAgent, "sshAgent/gpgAgent/ageAgent"},
	} {
		if f.set {
			return Layer{}, fmt.Errorf("%s: a served policy cannot set it (each session has its own working directory and no host environment); remove it", f.name)
		}
	}
	if !filepath.IsAbs(dir) {
		return Layer{}, errors.New("the document's directory must be absolute")
	}
	l := d.layer()
	var err error
	if l.AuditLog, err = placePath(d.AuditLog, dir, home); err != nil {
		return Layer{}, fmt.Errorf("auditLog %q: %w", d.AuditLog, err)
	}
	l.Grants = nil
	for _, g := range d.Grants {
		p, err := placePath(g.Path, dir, home)
		if err != nil {
			return Layer{}, fmt.Errorf("grants %q: %w", g.Path, err)
		}
		l.Grants = append(l.Grants, moat.PathRequest{Path: p, Access: g.Access})
	}
	return l, nil
}
