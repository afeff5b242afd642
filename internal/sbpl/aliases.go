package sbpl

import "strings"

// dataVolume is where the data volume is mounted; its firmlinks (/Users,
// /Applications, /Library, /private, /usr/local, /opt and others) make
// the same file reachable under both names.
const dataVolume = "/System/Volumes/Data"

// privateLinks are the root's links into /private.
var privateLinks = []string{"/tmp", "/var", "/etc"}

// Aliases returns every form that names p, p first: with and without the
// /private prefix of /tmp, /var and /etc, and each through the data
// volume's firmlink. p is absolute and clean.
func Aliases(p string) []string {
	base := []string{p}
	if rest, ok := strings.CutPrefix(p, dataVolume); ok && (rest == "" || rest[0] == '/') {
		if rest == "" {
			rest = "/"
		}
		base = append(base, rest)
	}
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, b := range base {
		for _, f := range privateForms(b) {
			add(f)
			if f != "/" && !under(f, "/System") && !under(f, "/dev") {
				add(dataVolume + f)
			}
		}
	}
	return out
}

// privateForms is p and, under /tmp, /var or /etc, its other spelling.
func privateForms(p string) []string {
	for _, l := range privateLinks {
		if under(p, l) {
			return []string{p, "/private" + p}
		}
		if under(p, "/private"+l) {
			return []string{p, strings.TrimPrefix(p, "/private")}
		}
	}
	return []string{p}
}

// under reports whether p is dir or lies beneath it.
func under(p, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}
