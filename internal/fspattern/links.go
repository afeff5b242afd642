package fspattern

import (
	"errors"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/moat-sandbox/moat/internal/paths"
)

// stepExplicit is step without the "**" segments: the states that
// consuming name reaches by matching a literal or glob component, which
// is a pattern naming that entry rather than passing over it.
func (r *Rule) stepExplicit(m uint64, name string) uint64 {
	var out uint64
	for i := range r.segs {
		if m&(1<<i) != 0 && !r.segs[i].dstar && r.segs[i].matchName(name) {
			out |= 1 << (i + 1)
		}
	}
	return r.closure(out)
}

// throughLink decides what a deny pattern whose way passes through the
// symbolic link abs (to a directory, entry name of directory j, with the
// rule states child after it) means. A link into Root is followed: its
// real directory is walked for the deny rules alone, so that what they
// name through the link is denied under its real path. A link out of Root
// that a pattern names explicitly (a literal or glob component matched
// the link) is an error naming the link: the plan is never weakened
// silently. One that only "**" passes over is recorded in LinksOut and
// not followed, since such patterns match inside Root. A nil job means
// nothing to walk.
func (m *materializer) throughLink(j job, name, abs string, child []uint64, ce eff) (*job, error) {
	masks := make([]uint64, len(m.walk))
	live := false
	var named *Rule
	for i := 0; i < m.nDeny; i++ {
		r := m.walk[i]
		masks[i] = child[i]
		if r.Negate || !r.live(child[i]) {
			continue
		}
		live = true
		if named == nil && r.live(r.stepExplicit(j.masks[i], name)) {
			named = r
		}
	}
	if !live {
		return nil, nil
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, &IndeterminateError{Path: abs, Err: bareErr(err)}
	}
	if !paths.Under(real, m.in.Root) {
		if named != nil {
			return nil, errors.New("filesystem policy: deny pattern " + strconv.Quote(named.Text) + " goes through the symbolic link " + strconv.Quote(abs) + ", which leads outside the working directory (to " + strconv.Quote(real) + "); deny the target by its own absolute path")
		}
		m.mu.Lock()
		m.res.LinksOut = append(m.res.LinksOut, abs)
		m.mu.Unlock()
		return nil, nil
	}
	var key strings.Builder
	key.WriteString(real)
	for _, mk := range masks {
		key.WriteByte(' ')
		key.WriteString(strconv.FormatUint(mk, 16))
	}
	m.mu.Lock()
	seen := m.linkSeen[key.String()]
	m.linkSeen[key.String()] = true
	m.mu.Unlock()
	if seen {
		return nil, nil
	}
	rel := name
	if j.rel != "" {
		rel = j.rel + "/" + name
	}
	return &job{abs: real, rel: rel, eff: ce, masks: masks, viaLink: true}, nil
}
