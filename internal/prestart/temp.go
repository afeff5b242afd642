package prestart

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/moat-sandbox/moat/internal/hostview"
	"github.com/moat-sandbox/moat/internal/paths"
	"github.com/moat-sandbox/moat/internal/refusal"
	"github.com/moat-sandbox/moat/internal/viewcheck"
)

// maxTempDirVars bounds how many shared-temp directories the variables
// passed to a sandbox may ask to show.
const maxTempDirVars = 16

// SharedTempDirs returns the directories in shared temp that variables
// passed to the sandbox (Set, and Passthrough as the host sets them) name,
// and that hostview.SharedTempDir lets it read; each one refused is
// recorded as a refusal naming the variable. skip are paths shown already
// (the working directory, the grants).
func (c *Checks) SharedTempDirs(skip []string) []string {
	type named struct{ name, value string }
	var vars []named
	for _, kv := range c.Set {
		k, v, _ := strings.Cut(kv, "=")
		vars = append(vars, named{k, v})
	}
	for _, k := range c.Passthrough {
		if v, ok := os.LookupEnv(k); ok {
			vars = append(vars, named{k, v})
		}
	}
	who := hostview.Owner{UID: os.Getuid()}
	who.Groups, _ = os.Getgroups()
	who.Groups = append(who.Groups, os.Getgid())
	var out []string
	seen := map[string]bool{}
	for _, nv := range vars {
		for _, p := range filepath.SplitList(nv.value) {
			temp := hostview.UnderSharedTemp(p, hostview.SharedTempDirs)
			if temp == "" || !filepath.IsAbs(p) || filepath.Clean(p) != p || seen[p] || paths.UnderAny(p, skip) {
				continue
			}
			if fi, err := os.Lstat(p); err != nil || !fi.IsDir() {
				continue // a file is shown or not by SharedTempFiles' rule
			}
			seen[p] = true
			if len(seen) > maxTempDirVars {
				return out
			}
			if err := hostview.SharedTempDir(p, temp, who); err != nil {
				if c.tempRefused == nil {
					c.tempRefused = map[string]bool{}
				}
				c.tempRefused[p] = true
				r := refusal.Refusal{
					Kind:    "env",
					Subject: nv.name,
					Detail:  "a directory in shared temp, not shown: " + err.Error(),
					Setting: "grants.read",
					Value:   p,
				}
				if need, _ := viewcheck.NeedOf(nv.name); need&viewcheck.NeedWrite != 0 {
					r.Setting = "grants.write"
				}
				c.add(refusal.Derived(r))
				continue
			}
			out = append(out, p)
		}
	}
	return out
}
