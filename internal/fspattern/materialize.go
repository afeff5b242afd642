package fspattern

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/moat-sandbox/moat/internal/hostinput"
)

// ProtectedNames are the control entries of the working directory that a
// broad writable pattern never makes writable: git's, the agents', and
// the fragment files. Every existing entry whose name starts with one of
// ProtectedPrefixes is protected too.
var ProtectedNames = []string{".git", ".agents", ".pi", ".moat-deny", ".moat-write", ".heimdall-deny", ".heimdall-write"}

// ProtectedPrefixes start the names of protected control entries.
var ProtectedPrefixes = []string{".moat-", ".heimdall-"}

// Input is what Materialize works on. The zero value is invalid: Root is
// required.
type Input struct {
	// Root is the working directory, absolute, clean and resolved (no
	// symbolic link on the way).
	Root string
	// RootAliases are other absolute spellings of Root, such as the one
	// the user wrote before links were resolved. Nil means none.
	RootAliases []string
	// Home expands "~". Empty makes "~" an error.
	Home string
	// Deny and Writable are the policy's pattern lines, in order.
	Deny, Writable []string
	// NoFragments skips reading the fragment files of Root. False, the
	// zero value, reads them.
	NoFragments bool
	// Inputs is the user's record of places that sandboxes could write
	// and of trusted files: a fragment in such a place is refused unless
	// its content is pinned (internal/hostinput). The zero value knows
	// none.
	Inputs hostinput.Store
	// Skip are fragment names at Root read as absent: a run killed
	// before Close made them, and the next run sets them aside. Nil
	// skips none.
	Skip map[string]bool
}

// Result is the concrete plan. Every path is absolute and clean, and each
// list is sorted and free of duplicates. The zero value plans nothing.
type Result struct {
	// RootWritable says the working directory itself is writable: a broad
	// writable pattern (".", "./", "*", "**", "**/*") or an absolute
	// writable ancestor covers it.
	RootWritable bool
	// RootDenied says a deny pattern named the working directory itself.
	RootDenied bool
	// CoveredByAncestor says an absolute writable ancestor covers the
	// working directory, so nothing is protected.
	CoveredByAncestor bool
	// Deny holds existing paths to deny (a symbolic link's resolved
	// target) and missing literal paths under a writable directory, which
	// must not be created.
	Deny []string
	// Writable holds the paths to make writable, besides Root.
	Writable []string
	// Readable holds the paths a negated literal deny restores, read-only,
	// inside a denied directory.
	Readable []string
	// ReadOnly holds the protected control entries (existing or not) and
	// the paths a negated writable pattern keeps read-only inside a
	// writable directory.
	ReadOnly []string
	// Seal holds the readable, non-writable directories in which a deny
	// pattern could match an entry created later.
	Seal []string
	// HardLinkGaps are denied regular files with more names (hard links)
	// than the walk found under Root: the rest lie outside it, or in a
	// directory that cannot be read, and reach the same content undenied.
	// Every name found under Root is in Deny.
	HardLinkGaps []string
	// LinksOut are symbolic links under Root to directories outside it,
	// through which an unanchored deny pattern (one that reaches them
	// through "**" only) could match; such patterns match inside Root,
	// so these are not followed. A pattern that names a path through
	// such a link is an error instead.
	LinksOut []string
	// DirsRead and EntriesSeen count the walk's work.
	DirsRead, EntriesSeen int
}

// compiled is the ordered rule lists of both sides.
type compiled struct {
	deny, writ []*Rule
}

// CompileAll compiles the policy lines of in, then the fragment files of
// its Root (unless NoFragments), in order. A fragment may not make a path
// outside Root writable: the working directory's content is not trusted
// to widen the sandbox beyond it.
func CompileAll(in Input) (deny, writable []*Rule, err error) {
	o := Options{Root: in.Root, RootAliases: in.RootAliases, Home: in.Home}
	add := func(dst []*Rule, text string) ([]*Rule, error) {
		r, err := Compile(text, o)
		if err != nil {
			return nil, err
		}
		r.order = len(dst)
		return append(dst, r), nil
	}
	for _, t := range in.Deny {
		if deny, err = add(deny, t); err != nil {
			return nil, nil, err
		}
	}
	for _, t := range in.Writable {
		if writable, err = add(writable, t); err != nil {
			return nil, nil, err
		}
	}
	if in.NoFragments {
		return deny, writable, nil
	}
	frag := func(dst []*Rule, names []string, isWrite bool) ([]*Rule, error) {
		for _, name := range names {
			if in.Skip[name] {
				continue
			}
			lines, err := ReadFragment(in.Root, name, in.Inputs)
			if err != nil {
				return nil, err
			}
			for _, l := range lines {
				r, err := Compile(l.Text, o)
				if err != nil {
					return nil, &FragmentError{Path: filepath.Join(in.Root, name), Line: l.N, Err: errors.New(err.Error())}
				}
				if r.Abs != "" {
					// Deny, writable or a negation of either: a fragment
					// speaks for the working directory only, so that a
					// checkout cannot widen (or undo) what the policy says
					// of the rest of the host.
					side := "deny"
					if isWrite {
						side = "writable"
					}
					return nil, &FragmentError{Path: filepath.Join(in.Root, name), Line: l.N, Err: errors.New(side + " pattern " + strconv.Quote(l.Text) + " names " + strconv.Quote(r.Abs) + ", outside the working directory; only the policy itself may name such a path")}
				}
				r.order = len(dst)
				dst = append(dst, r)
			}
		}
		return dst, nil
	}
	if deny, err = frag(deny, DenyFragments, false); err != nil {
		return nil, nil, err
	}
	if writable, err = frag(writable, WriteFragments, true); err != nil {
		return nil, nil, err
	}
	return deny, writable, nil
}

// Materialize compiles the patterns of in and turns them into concrete
// paths (seeds-inventory §B.4.1, with moat's additions: Seal, writable
// negations, and nearest-level resolution). It walks only the parts of
// Root that some pattern can reach, reading a directory whose live
// patterns are all literal by looking up those names alone.
func Materialize(in Input) (*Result, error) {
	if !filepath.IsAbs(in.Root) || filepath.Clean(in.Root) != in.Root {
		return nil, errors.New("filesystem policy: working directory " + strconv.Quote(in.Root) + " is not absolute and clean")
	}
	fi, err := os.Stat(in.Root)
	if err != nil {
		return nil, errors.New("filesystem policy: working directory " + strconv.Quote(in.Root) + ": " + bareErr(err).Error())
	}
	if !fi.IsDir() {
		return nil, errors.New("filesystem policy: working directory " + strconv.Quote(in.Root) + ": not a directory")
	}
	deny, writ, err := CompileAll(in)
	if err != nil {
		return nil, err
	}
	m := &materializer{in: in, c: compiled{deny: deny, writ: writ}, res: &Result{}}
	if err := m.run(); err != nil {
		return nil, err
	}
	m.res.finish()
	return m.res, nil
}

// eff is the access a path ends with.
type eff uint8

const (
	effRead      eff = iota // readable, not writable
	effWrite                // writable
	effDeny                 // denied
	effProtected            // a protected control entry: read-only, nothing writable below
	effNone                 // outside the root and unnamed: whatever the rest of the config says
)

type materializer struct {
	in  Input
	c   compiled
	res *Result

	walk      []*Rule // rules the walk matches, deny first
	nDeny     int
	protected map[string]bool // top-level names that are protected

	mu   sync.Mutex
	err  error
	wg   sync.WaitGroup
	sem  chan struct{}
	seen int
	dirs int

	// linkSeen holds the (directory, states) pairs entered through a
	// symbolic link, so that a link cycle is walked once.
	linkSeen map[string]bool
	// linkCand are denied regular files, and deniedDirs denied
	// directories, whose other names (hard links) hardLinks looks for.
	linkCand, deniedDirs []string
}

// sign returns +1, -1 or 0: the last rule of rs that names the absolute
// path p (Abs rules) matches positively, negatively, or none does.
func signAbs(rs []*Rule, p string) int {
	s := 0
	for _, r := range rs {
		if r.Abs == p {
			s = boolSign(r.Negate)
		}
	}
	return s
}

// signSelf is signAbs for the rules that name the root itself.
func signSelf(rs []*Rule, broadToo bool) int {
	s := 0
	for _, r := range rs {
		if r.Self || (broadToo && r.Broad) {
			s = boolSign(r.Negate)
		}
	}
	return s
}

// signRel returns the sign of the last rule of rs that matches rel.
func signRel(rs []*Rule, rel string, isDir bool) (int, *Rule) {
	s, last := 0, (*Rule)(nil)
	for _, r := range rs {
		if r.MatchRel(rel, isDir) {
			s, last = boolSign(r.Negate), r
		}
	}
	return s, last
}

func boolSign(neg bool) int {
	if neg {
		return -1
	}
	return 1
}

func (m *materializer) run() error {
	root := m.in.Root
	if err := m.concrete(); err != nil {
		return err
	}
	// The root itself.
	if signSelf(m.c.writ, true) > 0 {
		m.res.RootWritable = true
	}
	if signSelf(m.c.deny, false) > 0 {
		m.res.RootDenied = true
		m.res.RootWritable = false
		m.res.Deny = append(m.res.Deny, root)
	}
	if m.res.CoveredByAncestor && !m.res.RootDenied {
		m.res.RootWritable = true
	}
	for _, r := range m.c.deny {
		if r.Abs == "" && !r.Self {
			m.walk = append(m.walk, r)
		}
	}
	m.nDeny = len(m.walk)
	for _, r := range m.c.writ {
		if r.Abs == "" && !r.Self {
			m.walk = append(m.walk, r)
		}
	}
	if err := m.protect(); err != nil {
		return err
	}
	rootEff := effRead
	switch {
	case m.res.RootDenied:
		rootEff = effDeny
	case m.res.RootWritable:
		rootEff = effWrite
	}
	masks := make([]uint64, len(m.walk))
	for i, r := range m.walk {
		masks[i] = r.start()
	}
	n := runtime.GOMAXPROCS(0) * 2
	if n < 2 {
		n = 2
	}
	m.sem = make(chan struct{}, n)
	m.linkSeen = map[string]bool{}
	m.spawn(job{abs: root, eff: rootEff, masks: masks, wroot: rootEff == effWrite})
	m.wg.Wait()
	m.res.DirsRead, m.res.EntriesSeen = m.dirs, m.seen
	if m.err != nil {
		return m.err
	}
	return m.hardLinks()
}

// protect decides the protected control entries (step 9).
func (m *materializer) protect() error {
	m.protected = map[string]bool{}
	if m.res.CoveredByAncestor || m.res.RootDenied {
		return nil
	}
	root := m.in.Root
	names := append([]string(nil), ProtectedNames...)
	ents, err := os.ReadDir(root)
	if err != nil {
		return errors.New("filesystem policy: working directory " + strconv.Quote(root) + ": " + bareErr(err).Error())
	}
	for _, e := range ents {
		for _, p := range ProtectedPrefixes {
			if strings.HasPrefix(e.Name(), p) {
				names = append(names, e.Name())
			}
		}
	}
	for _, name := range names {
		if m.protected[name] {
			continue
		}
		p := filepath.Join(root, name)
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, os.ErrNotExist):
			if m.res.RootWritable {
				m.protected[name] = true
				m.res.ReadOnly = append(m.res.ReadOnly, p)
			}
			continue
		case err != nil:
			return &IndeterminateError{Path: p, Err: bareErr(err)}
		}
		isDir := fi.IsDir()
		ds, _ := signRel(m.c.deny, name, isDir)
		ws, _ := signRel(m.c.writ, name, isDir)
		if m.res.RootWritable || ws <= 0 || ds > 0 {
			m.protected[name] = true
			// In a read-only cwd a protected entry stays read-only anyway
			// (no writable target is made below it), so it needs a
			// read-only rule only where the cwd is writable; a denied one
			// is denied.
			if ds <= 0 && m.res.RootWritable {
				m.res.ReadOnly = append(m.res.ReadOnly, p)
			}
		}
	}
	return nil
}

// concrete handles the literal absolute rules outside the root (step 5).
func (m *materializer) concrete() error {
	set := map[string]bool{}
	for _, rs := range [][]*Rule{m.c.deny, m.c.writ} {
		for _, r := range rs {
			if r.Abs != "" {
				set[r.Abs] = true
			}
		}
	}
	if len(set) == 0 {
		return nil
	}
	paths := make([]string, 0, len(set))
	for p := range set {
		paths = append(paths, p)
	}
	sort.Slice(paths, func(i, j int) bool {
		di, dj := strings.Count(paths[i], "/"), strings.Count(paths[j], "/")
		if di != dj {
			return di < dj
		}
		return paths[i] < paths[j]
	})
	effOf := map[string]eff{}
	exists := map[string]bool{}
	isDir := map[string]bool{}
	parentEff := func(p string) (eff, string) {
		for d := filepath.Dir(p); ; d = filepath.Dir(d) {
			if e, ok := effOf[d]; ok {
				return e, d
			}
			if d == "/" {
				return effNone, ""
			}
		}
	}
	roots := append([]string{m.in.Root}, m.in.RootAliases...)
	for _, p := range paths {
		st, err := PathState(p)
		if err != nil {
			return err
		}
		exists[p] = st == Existing
		var lfi os.FileInfo
		if st == Existing {
			if lfi, err = os.Lstat(p); err != nil {
				return &IndeterminateError{Path: p, Err: bareErr(err)}
			}
			isDir[p] = lfi.IsDir()
		}
		pe, _ := parentEff(p)
		ds, ws := signAbs(m.c.deny, p), signAbs(m.c.writ, p)
		switch {
		case ds > 0:
			effOf[p] = effDeny
			if pe == effDeny {
				continue // redundant (step 8)
			}
			if st == Existing {
				t := denyTarget(p, true) // resolve links on the way too
				m.res.Deny = append(m.res.Deny, t)
				m.linkCand = append(m.linkCand, t)
				continue
			}
			// Missing: a guard under an existing writable directory, else a
			// seal where the host could create it.
			d, rest, err := nearestExisting(p)
			if err != nil {
				return err
			}
			if we, wd := parentEff(p); we == effWrite && exists[wd] && isDir[wd] {
				m.res.Deny = append(m.res.Deny, filepath.Join(d, rest))
				continue
			}
			if d != "" {
				m.res.Seal = append(m.res.Seal, d)
			}
		case ws > 0:
			effOf[p] = effWrite
			if pe == effWrite || st != Existing {
				continue // redundant, or missing: skipped
			}
			if lfi.Mode()&os.ModeSymlink != 0 {
				return &PatternError{Pattern: p, Problem: "a writable path is a symbolic link; name its target"}
			}
			m.res.Writable = append(m.res.Writable, p)
		case ds < 0 && pe == effDeny:
			effOf[p] = effRead
			if st == Existing {
				m.res.Readable = append(m.res.Readable, p)
			}
		case ws < 0 && pe == effWrite:
			effOf[p] = effRead
			if st == Existing {
				m.res.ReadOnly = append(m.res.ReadOnly, p)
			}
		default:
			effOf[p] = pe
		}
	}
	// The root is covered when its nearest named ancestor is writable, and
	// exists as a directory (#11): a deny between them wins.
	for _, root := range roots {
		if e, d := parentEff(root); e == effWrite && exists[d] && isDir[d] {
			m.res.CoveredByAncestor = true
		}
	}
	return nil
}

// nearestExisting returns the real path of the deepest existing directory
// above p, and the rest of p below it.
func nearestExisting(p string) (dir, rest string, err error) {
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		st, err := PathState(d)
		if err != nil {
			return "", "", err
		}
		if st == Existing {
			real, err := filepath.EvalSymlinks(d)
			if err != nil {
				return "", "", &IndeterminateError{Path: d, Err: bareErr(err)}
			}
			r, _ := filepath.Rel(d, p)
			return real, r, nil
		}
		if d == "/" {
			return "", "", nil
		}
	}
}

// denyTarget returns what denying the existing path p means: its real
// path, which for a symbolic link is its target, since reading through the
// link reaches it; for a dangling link, the link itself under its real
// directory. Inside the walk only a link needs resolving (the walk's
// directories are real), so isLink false returns p as it is.
func denyTarget(p string, isLink bool) string {
	if !isLink {
		return p
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		return filepath.Join(dir, filepath.Base(p))
	}
	return p
}

// job is one directory to visit.
type job struct {
	abs, rel string
	eff      eff
	masks    []uint64 // per walk rule: the states at this directory
	wroot    bool     // a writable root: the root, or a writable target
	viaLink  bool     // reached through a symbolic link: only denies count
}

func (m *materializer) spawn(j job) {
	m.wg.Add(1)
	select {
	case m.sem <- struct{}{}:
		go func() {
			defer m.wg.Done()
			m.visitTree(j)
			<-m.sem
		}()
	default:
		defer m.wg.Done()
		m.visitTree(j)
	}
}

func (m *materializer) visitTree(j job) {
	m.mu.Lock()
	failed := m.err != nil
	m.mu.Unlock()
	if failed {
		return
	}
	kids, err := m.visit(j)
	if err != nil {
		m.mu.Lock()
		if m.err == nil {
			m.err = err
		}
		m.mu.Unlock()
		return
	}
	for _, k := range kids {
		m.spawn(k)
	}
}

// dirEntry is what the walk needs of an entry.
type dirEntry struct {
	name string
	typ  os.FileMode
}

// visit matches one directory's entries and returns the subdirectories to
// descend.
func (m *materializer) visit(j job) ([]job, error) {
	// Which rules are live here, and are all their states literal?
	literalOnly := true
	var names []string
	anyLive := false
	for i, r := range m.walk {
		mk := j.masks[i]
		if !r.live(mk) {
			continue
		}
		anyLive = true
		for s := 0; s < len(r.segs); s++ {
			if mk&(1<<s) == 0 {
				continue
			}
			seg := &r.segs[s]
			if seg.dstar || seg.glob != nil {
				literalOnly = false
			} else {
				names = append(names, seg.lit)
			}
		}
	}
	if !anyLive {
		return nil, nil
	}
	var ents []dirEntry
	present := map[string]bool{}
	if literalOnly {
		sort.Strings(names)
		for i, n := range names {
			if i > 0 && names[i-1] == n {
				continue
			}
			fi, err := os.Lstat(filepath.Join(j.abs, n))
			if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				continue
			}
			if err != nil {
				return nil, &IndeterminateError{Path: filepath.Join(j.abs, n), Err: bareErr(err)}
			}
			ents = append(ents, dirEntry{name: n, typ: fi.Mode().Type()})
			present[n] = true
		}
	} else {
		des, err := readDir(j.abs)
		if err != nil {
			return nil, &IndeterminateError{Path: j.abs, Err: bareErr(err)}
		}
		ents = make([]dirEntry, len(des))
		for i, d := range des {
			ents[i] = dirEntry{name: d.Name(), typ: d.Type()}
		}
		if len(names) > 0 {
			for _, d := range des {
				present[d.Name()] = true
			}
		}
	}
	var r struct {
		Result
		linkCand, deniedDirs []string
	}
	// Seal and guards: what a new entry here could match.
	if !j.viaLink && (j.eff == effRead || j.eff == effProtected || j.eff == effWrite) {
		seal := false
		for i := 0; i < m.nDeny; i++ {
			rule, mk := m.walk[i], j.masks[i]
			if rule.Negate || !rule.live(mk) {
				continue
			}
			for s := 0; s < len(rule.segs); s++ {
				if mk&(1<<s) == 0 {
					continue
				}
				seg := &rule.segs[s]
				open := seg.dstar || seg.glob != nil || !present[seg.lit]
				if !open {
					continue
				}
				if j.eff != effWrite {
					seal = true
					continue
				}
				// A missing literal remainder under a writable directory is a
				// guard: the sandbox must not create it.
				if seg.glob != nil || seg.dstar || !allLiteral(rule.segs[s:]) || !(rule.literal || j.wroot) {
					continue
				}
				rel := joinLits(rule.segs[s:])
				full := rel
				if j.rel != "" {
					full = j.rel + "/" + rel
				}
				d1, _ := signRel(m.c.deny, full, true)
				d2, _ := signRel(m.c.deny, full, false)
				if d1 > 0 || d2 > 0 {
					r.Deny = append(r.Deny, filepath.Join(j.abs, filepath.FromSlash(rel)))
				}
			}
		}
		if seal {
			r.Seal = append(r.Seal, j.abs)
		}
	}
	var kids []job
	atRoot := j.rel == ""
	buf := make([]uint64, len(m.walk))
	for _, e := range ents {
		abs := j.abs + "/" + e.name // j.abs is clean, and so is this
		if j.abs == "/" {
			abs = "/" + e.name
		}
		isLink := e.typ&os.ModeSymlink != 0
		isDir := e.typ.IsDir()
		matchDir := isDir
		if isLink {
			if fi, err := os.Stat(abs); err == nil && fi.IsDir() {
				matchDir = true
			}
		}
		child := buf
		clear(child)
		ds, ws := 0, 0
		var dRule *Rule
		descendDeny := false // a rule that matters inside a denied directory
		anyLive := false
		for i, rule := range m.walk {
			mk := j.masks[i]
			if mk == 0 {
				continue
			}
			nm, hit := rule.step(mk, e.name)
			child[i] = nm
			if hit && (matchDir || !rule.DirOnly) {
				if i < m.nDeny {
					ds, dRule = boolSign(rule.Negate), rule
				} else {
					ws = boolSign(rule.Negate)
				}
			}
			if rule.live(nm) {
				anyLive = true
				if (i >= m.nDeny && !rule.Negate) || (i < m.nDeny && rule.Negate && rule.literal) {
					descendDeny = true
				}
			}
		}
		pe := j.eff
		ce := pe
		prot := atRoot && m.protected[e.name]
		switch {
		case ds > 0:
			ce = effDeny
			if pe != effDeny {
				t := denyTarget(abs, isLink)
				if isLink && t != abs {
					// The link itself is denied too, so that where its
					// directory is writable it cannot be replaced by one
					// pointing elsewhere.
					r.Deny = append(r.Deny, abs)
				}
				r.Deny = append(r.Deny, t)
				switch {
				case isDir && !isLink:
					r.deniedDirs = append(r.deniedDirs, t)
				case e.typ.IsRegular() || isLink:
					r.linkCand = append(r.linkCand, t)
				}
			}
		case j.viaLink:
			// Through a link only the denies count: a writable pattern never
			// reaches a link's target, and the real path has its own walk.
		case prot:
			ce = effProtected
		case ws > 0 && pe != effProtected:
			if isLink {
				break // a writable pattern never makes a link's target writable
			}
			ce = effWrite
			if pe != effWrite {
				r.Writable = append(r.Writable, abs)
			}
		case ds < 0 && pe == effDeny && dRule != nil && dRule.literal:
			ce = effRead
			r.Readable = append(r.Readable, abs)
		case ws < 0 && pe == effWrite && !isLink:
			ce = effRead
			r.ReadOnly = append(r.ReadOnly, abs)
		}
		if isLink && matchDir && anyLive && ce != effDeny {
			k, err := m.throughLink(j, e.name, abs, child, ce)
			if err != nil {
				return nil, err
			}
			if k != nil {
				kids = append(kids, *k)
			}
		}
		if !isDir || isLink || !anyLive {
			continue
		}
		if ce == effDeny && !descendDeny {
			continue
		}
		rel := e.name
		if !atRoot {
			rel = j.rel + "/" + e.name
		}
		kids = append(kids, job{abs: abs, rel: rel, eff: ce, masks: append([]uint64(nil), child...), wroot: ce == effWrite && pe != effWrite, viaLink: j.viaLink})
	}
	m.mu.Lock()
	m.dirs++
	m.seen += len(ents)
	m.res.Deny = append(m.res.Deny, r.Deny...)
	m.res.Writable = append(m.res.Writable, r.Writable...)
	m.res.Readable = append(m.res.Readable, r.Readable...)
	m.res.ReadOnly = append(m.res.ReadOnly, r.ReadOnly...)
	m.res.Seal = append(m.res.Seal, r.Seal...)
	m.linkCand = append(m.linkCand, r.linkCand...)
	m.deniedDirs = append(m.deniedDirs, r.deniedDirs...)
	m.mu.Unlock()
	return kids, nil
}

// readDir lists a directory in the order the kernel gives, with the
// entry types of getdents (no stat per entry).
func readDir(dir string) ([]os.DirEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

func allLiteral(segs []segment) bool {
	for i := range segs {
		if segs[i].dstar || segs[i].glob != nil {
			return false
		}
	}
	return true
}

func joinLits(segs []segment) string {
	parts := make([]string, len(segs))
	for i := range segs {
		parts[i] = segs[i].lit
	}
	return strings.Join(parts, "/")
}

// finish sorts and deduplicates every list.
func (r *Result) finish() {
	for _, l := range []*[]string{&r.Deny, &r.Writable, &r.Readable, &r.ReadOnly, &r.Seal, &r.HardLinkGaps, &r.LinksOut} {
		sort.Strings(*l)
		out := (*l)[:0]
		for i, p := range *l {
			if i == 0 || (*l)[i-1] != p {
				out = append(out, p)
			}
		}
		if len(out) == 0 {
			out = nil
		}
		*l = out
	}
}
