package cgroup

import (
	"path"
	"slices"
	"strings"
)

// mountEntry is the part of one /proc/self/mountinfo line this package uses.
type mountEntry struct {
	root       string   // root of the mount within its filesystem (field 4)
	mountPoint string   // where it is mounted (field 5), unescaped
	fsType     string   // filesystem type after the "-" separator
	superOpts  []string // per-superblock options, split on commas
}

// parseMountinfo parses the text of /proc/<pid>/mountinfo. Malformed lines
// are skipped: one odd mount must not hide the cgroup ones.
//
// Line format (proc(5)):
//
//	36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
func parseMountinfo(data string) []mountEntry {
	var out []mountEntry
	for line := range strings.SplitSeq(data, "\n") {
		f := strings.Fields(line)
		if len(f) < 7 {
			continue
		}
		sep := -1
		for i := 6; i < len(f); i++ {
			if f[i] == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || sep+1 >= len(f) {
			continue
		}
		e := mountEntry{
			root:       unescapeMount(f[3]),
			mountPoint: unescapeMount(f[4]),
			fsType:     f[sep+1],
		}
		if sep+3 < len(f) {
			e.superOpts = strings.Split(f[sep+3], ",")
		}
		out = append(out, e)
	}
	return out
}

// unescapeMount undoes the octal escapes (\040 for space, \011, \012,
// \134) the kernel uses for mountinfo path fields.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			v := (s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0')
			b.WriteByte(v)
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// v1Options are cgroup v1 mount options that are not controller names.
var v1Options = map[string]bool{
	"rw": true, "ro": true, "noprefix": true, "clone_children": true,
	"xattr": true, "cpuset_v2_mode": true, "favordynmods": true,
	"nofavordynmods": true, "all": true, "none": true, "seclabel": true,
}

// v1Controllers returns the controllers (and "name=X" named hierarchies) a
// cgroup v1 mount carries, from its super options.
func v1Controllers(e mountEntry) []string {
	var out []string
	for _, o := range e.superOpts {
		if o == "" || v1Options[o] {
			continue
		}
		if strings.Contains(o, "=") && !strings.HasPrefix(o, "name=") {
			continue // release_agent=..., etc.
		}
		out = append(out, o)
	}
	return out
}

// procCgroup is the parsed content of /proc/<pid>/cgroup.
type procCgroup struct {
	v2    string            // path in the v2 hierarchy ("0::path" line)
	hasV2 bool              // a "0::" line was present
	v1    map[string]string // v1 controller (or "name=X") -> path
}

// parseProcCgroup parses /proc/<pid>/cgroup, whose lines are
// "hierarchy-ID:controller-list:cgroup-path". Malformed lines are skipped.
func parseProcCgroup(data string) procCgroup {
	pc := procCgroup{v1: map[string]string{}}
	for line := range strings.SplitSeq(data, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 || parts[0] == "" || !strings.HasPrefix(parts[2], "/") {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			pc.v2, pc.hasV2 = parts[2], true
			continue
		}
		for c := range strings.SplitSeq(parts[1], ",") {
			if c != "" {
				pc.v1[c] = parts[2]
			}
		}
	}
	return pc
}

// dirIn returns the directory that holds the cgroup cgPath (as listed in
// /proc/self/cgroup) inside the mount e, or false if that cgroup is not
// visible through e (the mount shows a different subtree, or the path lies
// outside this process's cgroup namespace).
func dirIn(e mountEntry, cgPath string) (string, bool) {
	// The kernel shows cgroups outside this process's cgroup namespace as
	// "/../..."; such a path cannot be reached through the mount.
	if !strings.HasPrefix(cgPath, "/") || slices.Contains(strings.Split(cgPath, "/"), "..") {
		return "", false
	}
	cg := path.Clean(cgPath)
	root := path.Clean(e.root)
	switch {
	case root == "/":
	case cg == root:
		cg = "/"
	case strings.HasPrefix(cg, root+"/"):
		cg = cg[len(root):]
	default:
		return "", false
	}
	return path.Join(e.mountPoint, cg), true
}
