package runjournal

import (
	"path/filepath"
	"sort"

	"github.com/moat-sandbox/moat/internal/gitguard"
)

// Paths that the configuration and hooks of an existing repository name
// (internal/gitguard, named.go): a hooks directory (husky's .husky/_), the
// program of a filter or diff driver (nbstripout's .venv/bin/python), the
// interpreter a pre-commit hook execs, the target of a hook link. The
// host's git runs them, so what a sandbox writes there would run on the
// host. Each one in a writable place is reported at New, kind
// "control-path"; the Linux backend binds it read-only for the run (with
// a mount namespace), and Close sets it aside when it changed anyway.

// reportNamed adds one "control-path" Refusal per named path found at New.
func (run *Run) reportNamed(snap *gitguard.Snapshot) {
	seen := map[string]bool{}
	for _, n := range snap.NamedPaths() {
		if seen[n.Path] {
			continue
		}
		seen[n.Path] = true
		d := "named by " + n.Key + " of the repository " + n.Repo + ": the host's git runs it, so what the sandbox writes there would run on the host"
		if n.Dir {
			d = "the hooks directory " + n.Key + " of the repository " + n.Repo + " names: the host's git runs what is in it, so what the sandbox writes there would run on the host"
		}
		for _, w := range run.places {
			if v := gitguard.VenvRoot(n.Path, filepath.Clean(w)); v != "" {
				d += "; it lies in the Python virtual environment " + v + ", which is read-only for this run as a whole (installing into it fails)"
				break
			}
		}
		d += "; read-only for this run where the sandbox has a mount namespace, and set aside at Close if it changed"
		run.refuse(Found{Kind: "control-path", Subject: n.Path, Detail: d})
	}
	gaps := snap.NamedGaps()
	repos := make([]string, 0, len(gaps))
	for g := range gaps {
		repos = append(repos, g)
	}
	sort.Strings(repos)
	for _, g := range repos {
		run.refuse(Found{Kind: "control-path", Subject: g, Detail: "its configuration and hooks were not read whole (" + gaps[g] +
			"): a program or hooks directory they name in a writable place may not be protected; check them before running git there"})
	}
}
