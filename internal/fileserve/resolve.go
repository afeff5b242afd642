package fileserve

import (
	"errors"
	"strings"
)

// target is a request's path resolved to a place: the directory below the
// place that holds the final name (Dir, "." for the place itself) and the
// final name (Base, "." when the path names a directory by "." or ".."
// or is the place itself). Dir may hold ".." components: they are the
// kernel's to resolve, beneath the place.
type target struct {
	Place int
	Dir   string
	Base  string
}

// errOutside is a path that lies in no place.
var errOutside = errors.New("outside every place")

// errBadPath is a path that is not a path (empty component rules aside):
// a NUL byte or too long.
var errBadPath = errors.New("not a valid path")

// resolve finds the place of path p and splits the rest. p is absolute or
// relative to workdir; places are absolute and clean. The place is the
// longest one whose components begin p's, before any "..": a ".." that
// would climb out of it is left for the kernel to refuse, and one before
// the place's end makes the path match no place. Nothing is cleaned: "a/../b"
// stays as it is, so a link at "a" is resolved by the kernel, as in the
// sandbox.
func resolve(places []string, workdir, p string) (target, error) {
	if len(p) > MaxPath || strings.IndexByte(p, 0) >= 0 {
		return target{}, errBadPath
	}
	if !strings.HasPrefix(p, "/") {
		p = workdir + "/" + p
	}
	comps := components(p)
	best, bestLen := -1, -1
	for i, pl := range places {
		pc := components(pl)
		if len(pc) > bestLen && hasPrefix(comps, pc) {
			best, bestLen = i, len(pc)
		}
	}
	if best < 0 {
		return target{}, errOutside
	}
	rest := comps[bestLen:]
	switch {
	case len(rest) == 0:
		return target{Place: best, Dir: ".", Base: "."}, nil
	case rest[len(rest)-1] == "..":
		return target{Place: best, Dir: strings.Join(rest, "/"), Base: "."}, nil
	case len(rest) == 1:
		return target{Place: best, Dir: ".", Base: rest[0]}, nil
	}
	return target{Place: best, Dir: strings.Join(rest[:len(rest)-1], "/"), Base: rest[len(rest)-1]}, nil
}

// components splits an absolute path into its names, dropping empty and
// "." components and keeping "..".
func components(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// hasPrefix reports whether pre begins comps with no ".." among them.
func hasPrefix(comps, pre []string) bool {
	if len(pre) > len(comps) {
		return false
	}
	for i, c := range pre {
		if comps[i] != c || c == ".." {
			return false
		}
	}
	return true
}

// display is the path of t as the sandbox sees it, cleaned lexically:
// exact when t's Dir has no "..", otherwise the caller asks the kernel.
func display(place string, t target) string {
	parts := []string{strings.TrimSuffix(place, "/")}
	for _, c := range []string{t.Dir, t.Base} {
		if c != "." {
			parts = append(parts, c)
		}
	}
	return clean(strings.Join(parts, "/"))
}

// clean is path.Clean for an absolute slash path.
func clean(p string) string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		switch c {
		case "", ".":
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, c)
		}
	}
	return "/" + strings.Join(out, "/")
}

// hasDotDot reports whether t's Dir climbs.
func hasDotDot(t target) bool {
	for _, c := range strings.Split(t.Dir, "/") {
		if c == ".." {
			return true
		}
	}
	return false
}

// baseName is the last name of an absolute clean path; "/" for the root.
func baseName(p string) string {
	if p == "/" {
		return "/"
	}
	return p[strings.LastIndexByte(p, '/')+1:]
}
