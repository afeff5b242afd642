package linux

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// A sandbox run as root (capabilities dropped) still owns /etc, so every
// file there that only root may read (ssl/private keys, mail relay
// passwords, application keys) would be readable. Naming them always
// misses one, so at start every /etc entry whose mode withholds read from
// others is hidden, whatever its name, besides the named etcSecrets:
// masked in a mount namespace, carved out of the Landlock rules without
// one. A directory that withholds read or search from others is hidden
// whole and not entered. The walk is bounded (etcScanDepth levels,
// etcScanBudget entries); a tree beyond the bound is hidden whole rather
// than left open.
const (
	etcScanDepth  = 8
	etcScanBudget = 50000
)

// etcPrivate lists the entries under root (normally /etc) that others may
// not read, in path order. Links are skipped: what they lead to has rules
// of its own. Entries the walk cannot read or reach within its bounds are
// listed too (fail closed).
func etcPrivate(root string) []string {
	var out []string
	budget := etcScanBudget
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			out = append(out, dir)
			return
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			if e.Type()&fs.ModeSymlink != 0 {
				continue
			}
			budget--
			info, err := e.Info()
			if err != nil {
				continue // gone meanwhile
			}
			mode := info.Mode().Perm()
			switch {
			case e.IsDir() && (mode&0o005 != 0o005 || budget <= 0 || depth >= etcScanDepth):
				out = append(out, p)
			case e.IsDir():
				walk(p, depth+1)
			case mode&0o004 == 0:
				out = append(out, p)
			}
		}
	}
	walk(root, 1)
	return out
}

// etcHidden is what a root sandbox must not read in /etc: the named
// secrets that exist and every private entry, without duplicates or
// paths inside an already hidden directory.
func etcHidden() []string {
	var all []string
	for name, secret := range etcSecrets {
		if secret {
			all = append(all, "/etc/"+name)
		}
	}
	all = append(all, etcPrivate("/etc")...)
	sort.Strings(all)
	var out []string
next:
	for _, p := range all {
		for _, q := range out {
			if isUnder(p, q) {
				continue next
			}
		}
		out = append(out, p)
	}
	return out
}
