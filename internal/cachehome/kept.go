package cachehome

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/moat-sandbox/moat/internal/paths"
)

// RecordsName is the directory of the cache stores' records in moat's
// state directory.
const RecordsName = "cache-homes"

// Kept is one sandbox's kept cache stores (Config.KeepCaches): the lease
// on them and where they live. The zero value holds none.
type Kept struct {
	lease  *Lease
	layout Layout
}

// Open takes the run's cache stores and links them into the fresh home
// home: only the cache directories persist, never the home's config or
// start-up files. The key is the working directory workDir's identity and
// policy, the digest of the policy. Another run holding the same key
// leaves this one a throwaway home, as do a platform without stores and
// stores that cannot be made (layout fails: no usable HOME) or used
// safely (inside the working directory or the state directory, or not
// what moat made).
func (k *Kept) Open(layout func() (Layout, error), workDir, home, policy string) error {
	project, err := Identify(workDir)
	if errors.Is(err, ErrNoIdentity) {
		return nil // a re-made directory could not be told apart: a throwaway home
	}
	if err != nil {
		return fmt.Errorf("keep caches: working directory %q: %w", workDir, err)
	}
	l, err := layout()
	if err != nil {
		return nil // no usable cache directory (no HOME, say): a throwaway home
	}
	root, err := filepath.EvalSymlinks(filepath.Dir(l.Root))
	if err == nil {
		root = filepath.Join(root, filepath.Base(l.Root))
	} else {
		root = l.Root
	}
	// Stores inside the working directory (a home working directory, say)
	// would be writable through it, all of them; stores in the state
	// directory would show it. Either way: a throwaway home.
	if paths.Under(root, workDir) || paths.Under(workDir, root) || paths.Under(root, filepath.Dir(l.Records)) {
		return nil
	}
	lease, err := Open(l, project, policy)
	if err != nil {
		// Another run holds them (ErrBusy), or the stores cannot be made
		// or are not what moat made: a throwaway home, which keeps
		// nothing and trusts nothing.
		return nil
	}
	if err := lease.Link(home); err != nil {
		lease.Close(1)
		return fmt.Errorf("keep caches: %w", err)
	}
	k.lease, k.layout = lease, l
	return nil
}

// Root is where every project's cache stores live, resolved, which every
// sandbox's view hides (a run's own stores are granted back), so that no
// run, at any isolation level, reads or writes another policy's caches:
// the stores' layout, or layout's when k holds none; "" when there is no
// such place.
func (k *Kept) Root(layout func() (Layout, error)) string {
	l := k.layout
	if l.Root == "" {
		var err error
		if l, err = layout(); err != nil {
			return ""
		}
	}
	if r, err := filepath.EvalSymlinks(l.Root); err == nil {
		return r
	}
	return l.Root
}

// RecordedRoots are the stores roots that runs with other environments
// used (Roots, in the records of moat's state directory state), resolved:
// every sandbox's view hides them as it hides Kept.Root, so a grant over
// another XDG_CACHE_HOME shows no other policy's stores. A record that
// cannot be read hides nothing more.
func RecordedRoots(state string) []string {
	roots, _ := Roots(filepath.Join(state, RecordsName))
	out := make([]string, 0, len(roots))
	for _, r := range roots {
		if res, err := filepath.EvalSymlinks(r); err == nil {
			r = res
		}
		out = append(out, r)
	}
	return out
}

// Stores are the run's cache store directories: writable, never
// executable, and outliving the run. Nil when k holds none.
func (k *Kept) Stores() []string {
	if k.lease == nil {
		return nil
	}
	return k.lease.Stores()
}

// Release records the stores' use and size and releases them; nil when k
// holds none.
func (k *Kept) Release() error {
	if k.lease == nil {
		return nil
	}
	err := k.lease.Close(0)
	k.lease = nil
	return err
}

// Prune bounds the stores' age and size, at Close and never on the start
// path; its failure does not fail Close, and the next Close tries again.
func (k *Kept) Prune() {
	if k.layout.Root == "" {
		return
	}
	_, _ = Prune(k.layout, Bounds{}, time.Now())
}
