package linux

import "fmt"

// The sandbox's /tmp and /var/tmp are directories of its own, bound over
// the host's (helperSpec.PrivateTmp). Landlock grants a right on a
// directory for everything beneath it, so a carved path below /tmp (a
// protected path such as a state directory in the host's /tmp, a sealed
// working directory under /tmp) used to strip the private /tmp's own rule
// down to listing: nothing new could be created in /tmp (mktemp:
// Permission denied). keepPrivateTempWritable drops the carves that have
// no business there:
//
//   - a carved path under a private temp directory that lies in no bind
//     made inside it is a path of the host's shared temp, which the
//     private directory already hides: carving it guards nothing;
//   - a carved path inside a read-only bind under a private temp
//     directory (a read-only cwd or grant under /tmp) cannot be written
//     (the mount is read-only, EROFS), and the existing denied paths in it
//     stay masked; what is lost is the seal's hold on entries the host
//     creates there during the run, which the private directory's rights
//     then reach (reported as a gap);
//   - a carved path inside a writable bind under a private temp directory
//     keeps its carve: there the carve is what stops the sandbox from
//     creating a protected name, so it wins over /tmp's writability
//     (reported as a gap).
func (e *Engine) keepPrivateTempWritable(s *helperSpec) {
	if len(s.PrivateTmp) == 0 || len(s.Carve) == 0 {
		return
	}
	var kept []carveRule
	for _, c := range s.Carve {
		dir := privateTempAbove(s, c.Path)
		if dir == "" {
			kept = append(kept, c)
			continue
		}
		bind, writable := bindHolding(s, dir, c.Path)
		switch {
		case bind == "":
			// The host's shared temp, hidden by the private one.
		case !writable:
			if c.Seal {
				e.gaps = append(e.gaps, fmt.Sprintf("%s is sealed but lies in the private %s: an entry the host creates there during the run is readable in the sandbox", c.Path, dir))
			}
		default:
			kept = append(kept, c)
			e.gaps = append(e.gaps, fmt.Sprintf("%s is carved inside %s, which lies in the private %s: no entry can be created directly in %s; move %s out of %s", c.Path, bind, dir, dir, bind, dir))
		}
	}
	s.Carve = kept
	var masks []string
	for _, m := range s.MaskFiles {
		if dir := privateTempAbove(s, m); dir != "" {
			if bind, _ := bindHolding(s, dir, m); bind == "" {
				continue // hidden by the private directory already
			}
		}
		masks = append(masks, m)
	}
	s.MaskFiles = masks
}

// privateTempAbove returns the private temporary directory (/tmp,
// /var/tmp) that p lies strictly under, or "".
func privateTempAbove(s *helperSpec, p string) string {
	for dir := range s.PrivateTmp {
		if isStrictlyUnder(p, dir) {
			return dir
		}
	}
	return ""
}

// bindHolding returns the place bound inside the private temporary
// directory dir that holds p (p or a directory above it), the nearest
// one, and whether it is writable; "" when p lies in no bind there. A
// bind inside p does not count: its own rule is an explicit grant that a
// carve of p leaves as it is.
func bindHolding(s *helperSpec, dir, p string) (bind string, writable bool) {
	consider := func(list []string, w bool) {
		for _, b := range list {
			if !isStrictlyUnder(b, dir) || !isUnder(p, b) {
				continue
			}
			switch {
			case len(b) > len(bind):
				bind, writable = b, w
			case b == bind:
				writable = writable || w
			}
		}
	}
	consider([]string{s.WorkDir}, true)
	consider(s.ReadWrite, true)
	consider(s.WriteExec, true)
	consider(s.ReadOnly, false)
	consider(s.ReadExec, false)
	consider(s.TempRead, false)
	consider(s.ListOnly, false)
	consider(s.DevFiles, false)
	return bind, writable
}
