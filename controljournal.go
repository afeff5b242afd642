package moat

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/moat-sandbox/moat/internal/bytestr"
	"github.com/moat-sandbox/moat/internal/cachehome"
	"github.com/moat-sandbox/moat/internal/gitguard"
	"github.com/moat-sandbox/moat/internal/hostiletree"
	"github.com/moat-sandbox/moat/internal/paths"
	quarantinedir "github.com/moat-sandbox/moat/internal/quarantine"
	"github.com/moat-sandbox/moat/internal/spec"
	"github.com/moat-sandbox/moat/internal/statedir"
)

// The run journal and the quarantine.
//
// A sandbox may create a control name (.git, .agents, .pi, .moat-*,
// .heimdall-*) at the top of a place it may write, and the engine may
// create placeholders on the host for missing denied paths. Close undoes
// both; a moat killed before Close (SIGKILL, a crash, a power cut) would
// leave them, and a planted .moat-write would widen the next run there. So
// New, before any command runs, writes a journal of the run (0600, in the
// user's moat state directory, which no sandbox can read or write): its
// owner (PID, start time, PID namespace, boot ID), each writable place
// with the control names present at start, and each missing denied path
// the engine may guard with a placeholder. Close deletes it once it has
// undone the run. Every New first sweeps the journals whose owner is
// dead: what those runs created is moved to the quarantine, their
// placeholders removed, and each reported as a Refusal of kind
// "control-path". Nothing that existed at the dead run's start is
// touched, and nothing is deleted: a control entry the sandbox created
// is moved (a rename, or a copy then removal across file systems) to
// STATE/quarantine/ID/PLACE/NAME, PLACE being the place's path escaped.

// journalVersion opens every journal.
const journalVersion = "moat-journal 1"

// maxJournalSize bounds a journal.
const maxJournalSize = 8 << 20

// runJournal is what a journal records.
type runJournal struct {
	Version string         `json:"version"`
	ID      string         `json:"id"`
	Owner   runOwner       `json:"owner"`
	Places  []journalPlace `json:"places,omitempty"`
	// Deny are the missing denied paths, each with the missing
	// directories on its way, outermost first.
	Deny []journalDeny `json:"deny,omitempty"`
}

// runOwner identifies the process that wrote a journal.
type runOwner struct {
	Pid   int    `json:"pid"`
	Start uint64 `json:"start"`
	PidNS string `json:"pidns"`
	Boot  string `json:"boot"`
}

// journalPlace is a writable place and the control entries at its top at
// start.
type journalPlace struct {
	Path    string         `json:"path"`
	Present []journalEntry `json:"present,omitempty"`
	// Repos are the .git entries below the top at start.
	Repos []string `json:"repos,omitempty"`
	// Controls are the git control paths (config, commondir, hooks/*,
	// info/*, worktrees/*/..., include files, ...) of every git
	// directory in the place at start, relative to it, when Recorded;
	// Cut says there were more than maxJournalControls, so none are.
	Controls []string `json:"controls,omitempty"`
	Recorded bool     `json:"recorded,omitempty"`
	Cut      bool     `json:"cut,omitempty"`
}

// maxJournalControls bounds the control paths a journal records per
// place (a path is about 40 bytes: well under maxJournalSize).
const maxJournalControls = 1 << 15

// journalEntry is one entry that existed at start, by name and inode.
type journalEntry struct {
	Name string `json:"name"`
	Dev  uint64 `json:"dev"`
	Ino  uint64 `json:"ino"`
}

// journalDeny is a denied path missing at start.
type journalDeny struct {
	Path string   `json:"path"`
	Made []string `json:"made,omitempty"`
}

// isTopControlName reports whether name, at the top of a place, is a
// control entry the journal and the quarantine look after.
func isTopControlName(name string) bool {
	return name == ".git" || strings.HasPrefix(name, ".git.moat-quarantine-") || gitguard.IsControlName(name)
}

// stateRootOverride replaces the state directory in tests.
var stateRootOverride string

// moatStateRoot is the user's moat state directory: the first usable of
// statedir.StateRootCandidates ($XDG_STATE_HOME/moat,
// ~/.local/state/moat for $HOME and then for the passwd entry's home,
// /run/user/UID/moat-state, /var/tmp/moat-state-UID), made 0700, and
// used only when it is a directory of this user's that nobody else may
// enter. It never falls back into the system temporary directory; with
// no usable place it is an error that says how to name one.
func moatStateRoot() (string, error) {
	key := stateRootOverride + "\x00" + os.Getenv("XDG_STATE_HOME") + "\x00" + os.Getenv("HOME")
	stateRootCache.Lock()
	defer stateRootCache.Unlock()
	if stateRootCache.key == key && privateDir(stateRootCache.root) == nil {
		return stateRootCache.root, nil
	}
	root, err := findStateRoot()
	if err == nil {
		stateRootCache.key, stateRootCache.root = key, root
	}
	return root, err
}

// stateRootCache is the state directory last found, for the environment
// it was found in.
var stateRootCache struct {
	sync.Mutex
	key, root string
}

func findStateRoot() (string, error) {
	var cands []statedir.StateRootCandidate
	if stateRootOverride != "" {
		cands = []statedir.StateRootCandidate{{Path: stateRootOverride}}
	} else {
		cands = statedir.StateRootCandidates(os.Getenv("XDG_STATE_HOME"), os.Getenv("HOME"), passwdHome, os.Geteuid())
	}
	var tried []string
	for _, c := range cands {
		r, err := useStateRoot(c)
		if err == nil {
			return r, nil
		}
		tried = append(tried, paths.Bare(err).Error())
	}
	return "", errorf("state directory: no private place for moat's state (run journals, quarantine); set XDG_STATE_HOME to a directory of yours (tried: %s)", strings.Join(tried, "; "))
}

// useStateRoot makes candidate c and returns its resolved path when it is
// a private directory of this user's.
func useStateRoot(c statedir.StateRootCandidate) (string, error) {
	if c.Shared {
		if err := statedir.MakeSharedStateRoot(c.Path, os.Geteuid()); err != nil {
			return "", err
		}
		return c.Path, nil
	}
	if err := os.MkdirAll(c.Path, 0o700); err != nil {
		return "", err
	}
	r, err := filepath.EvalSymlinks(c.Path)
	if err != nil {
		return "", err
	}
	if err := privateDir(r); err != nil {
		return "", err
	}
	return r, nil
}

// legacyStateRoot is where an earlier moat fell back to with no usable
// HOME: moat-state-UID in the system temporary directory. Only its
// journals are still swept (when it is a private directory of this
// user's); nothing new is written there.
func legacyStateRoot() string {
	if stateRootOverride != "" {
		return stateRootOverride
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("moat-state-%d", os.Geteuid()))
}

// passwdHome is the home directory of this user's passwd entry, or "".
func passwdHome() string {
	u, err := user.LookupId(strconv.Itoa(os.Geteuid()))
	if err != nil {
		return ""
	}
	return u.HomeDir
}

// stateSub makes (0700) and returns the directory name under the state
// root.
func stateSub(root, name string) (string, error) {
	d := filepath.Join(root, name)
	if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	if err := privateDir(d); err != nil {
		return "", err
	}
	return d, nil
}

// journalSync makes writeJournal wait for the disk.
var journalSync = true

// journalPath is where sandbox id's journal lives.
func journalPath(dir, id string) string { return filepath.Join(dir, id+".json") }

// writeJournal writes j atomically, 0600.
func writeJournal(dir string, j *runJournal) (string, error) {
	b, err := json.Marshal(bytestr.Out(j)) // a place's name may hold bytes that are not UTF-8
	if err != nil {
		return "", err
	}
	p := journalPath(dir, j.ID)
	tmp := p + ".new"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	_, err = f.Write(b)
	if err == nil && journalSync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return "", err
	}
	return p, nil
}

// parseJournal decodes a journal, strictly.
func parseJournal(b []byte) (*runJournal, error) {
	if len(b) > maxJournalSize {
		return nil, errors.New("journal too large")
	}
	var j runJournal
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.DisallowUnknownFields()
	if err := d.Decode(&j); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errors.New("trailing data")
	}
	bytestr.In(&j)
	if j.Version != journalVersion {
		return nil, errors.New("not a moat journal")
	}
	if len(j.ID) != 12 || strings.Trim(j.ID, "0123456789abcdef") != "" {
		return nil, errors.New("bad id")
	}
	if j.Owner.Pid <= 0 {
		return nil, errors.New("bad owner")
	}
	for _, p := range j.Places {
		if !filepath.IsAbs(p.Path) || filepath.Clean(p.Path) != p.Path || p.Path == "/" {
			return nil, fmt.Errorf("bad place %q", p.Path)
		}
		for _, e := range p.Present {
			if !isTopControlName(e.Name) || strings.ContainsRune(e.Name, '/') {
				return nil, fmt.Errorf("bad entry %q", e.Name)
			}
		}
		for _, r := range p.Repos {
			if filepath.Clean(r) != r || !strings.HasPrefix(r, p.Path+"/") || filepath.Base(r) != ".git" {
				return nil, fmt.Errorf("bad repository %q", r)
			}
		}
	}
	for _, d := range j.Deny {
		for _, p := range append([]string{d.Path}, d.Made...) {
			if !filepath.IsAbs(p) || filepath.Clean(p) != p || p == "/" {
				return nil, fmt.Errorf("bad path %q", p)
			}
		}
	}
	return &j, nil
}

// journalState is a sandbox's journal, once written.
type journalState struct {
	root string // the state directory
	path string // the journal file
	// keep leaves the journal for a later sweep: something Close set
	// aside could not be moved out of its place.
	keep bool
}

// sweepCrashed undoes the runs whose journal's owner is dead; New calls
// it first, before the git snapshot, so that nothing a dead run planted
// counts as present at this run's start.
func (s *Sandbox) sweepCrashed() {
	SweepCrashedRuns() // what it finds waits in crashPending
	crashPending.Lock()
	earlier := crashPending.list
	crashPending.list = nil
	crashPending.Unlock()
	for _, r := range earlier {
		s.addRefusal(r)
	}
}

// crashPending holds what a sweep outside New found, for the next New of
// this process to report.
var crashPending struct {
	sync.Mutex
	list []Refusal
}

// SweepCrashedRuns undoes the runs of this user whose moat was killed
// before Close: what their sandboxes created at the top of a writable
// place (.git, .agents, .pi, .moat-*, .heimdall-*) is moved to the
// quarantine of moat's state directory, their placeholders are removed,
// and what it did is returned, one "control-path" [Refusal] each. [New]
// calls it first; call it also before reading anything a sandbox may have
// written in a place, such as the policy fragments of a cwd. What it
// returns is reported again by the next New of this process.
func SweepCrashedRuns() []Refusal {
	root, err := moatStateRoot()
	if err != nil {
		return nil
	}
	sweeper := &Sandbox{id: randomID()}
	sweeper.sweepJournals(root)
	if legacy := legacyStateRoot(); legacy != root && privateDir(legacy) == nil {
		// Runs of an earlier moat kept their journals there; theirs are
		// undone where they were recorded.
		sweeper.sweepJournals(legacy)
	}
	found := sweeper.refused.Snapshot()
	if len(found) > 0 {
		crashPending.Lock()
		crashPending.list = append(crashPending.list, found...)
		crashPending.Unlock()
	}
	return found
}

// openJournal records this run's journal; New calls it after the git
// snapshot and before the engine. A run without a writable place or a
// missing denied path writes none. It fails closed: a run that needs a
// journal and cannot write one is not started.
func (s *Sandbox) openJournal() error {
	places := s.gitPlaces()
	var deny []journalDeny
	for _, d := range s.cfg.Deny {
		if jd, ok := missingDeny(d); ok {
			deny = append(deny, jd)
		}
	}
	if len(places) == 0 && len(deny) == 0 {
		return nil
	}
	root, err := moatStateRoot()
	if err != nil {
		return err
	}
	dir, err := stateSub(root, "journal")
	if err != nil {
		return errorf("run journal: %w", err)
	}
	j := &runJournal{Version: journalVersion, ID: s.id, Owner: selfOwner(), Deny: deny}
	bytesLeft := maxJournalControlBytes
	for _, p := range places {
		pl := journalPlace{Path: p, Present: topControlEntries(p), Repos: s.nestedRepos(p)}
		pl.Controls, pl.Cut = s.startControls(p, &bytesLeft)
		pl.Recorded = !pl.Cut
		j.Places = append(j.Places, pl)
	}
	path, err := writeJournal(dir, j)
	if err != nil {
		return errorf("run journal: %w", err)
	}
	s.journal = &journalState{root: root, path: path}
	return nil
}

// closeJournal deletes the journal; Close calls it once the run is undone.
func (s *Sandbox) closeJournal() {
	if s.journal != nil {
		if !s.journal.keep {
			_ = os.Remove(s.journal.path)
		}
		// Bounded by age and size, at most once an hour, here at the end
		// of a run and never at its start (internal/quarantine).
		_ = quarantinedir.AutoPrune(s.journal.root, time.Now())
		s.journal = nil
	}
}

// missingDeny records d when it is missing, with the missing directories
// on its way (at most 64).
func missingDeny(d string) (journalDeny, bool) {
	if !filepath.IsAbs(d) {
		return journalDeny{}, false
	}
	d = filepath.Clean(d)
	if _, err := os.Lstat(d); !errors.Is(err, fs.ErrNotExist) || d == "/" {
		return journalDeny{}, false
	}
	jd := journalDeny{Path: d}
	for c, i := filepath.Dir(d), 0; c != "/" && i < 64; c, i = filepath.Dir(c), i+1 {
		if _, err := os.Lstat(c); !errors.Is(err, fs.ErrNotExist) {
			break
		}
		jd.Made = append([]string{c}, jd.Made...)
	}
	return jd, true
}

// topControlEntries lists the control entries at the top of place.
func topControlEntries(place string) []journalEntry {
	entries, err := os.ReadDir(place)
	if err != nil {
		return nil
	}
	var out []journalEntry
	for _, e := range entries {
		if !isTopControlName(e.Name()) {
			continue
		}
		dev, ino, err := fileIdentity(filepath.Join(place, e.Name()))
		if err != nil {
			continue
		}
		out = append(out, journalEntry{Name: e.Name(), Dev: dev, Ino: ino})
	}
	return out
}

// sweepJournals undoes the runs whose journal's owner is dead.
func (s *Sandbox) sweepJournals(root string) {
	dir := filepath.Join(root, "journal")
	if privateDir(dir) != nil {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") || !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(dir, name)
		b, ok := readOwnFile(p)
		if !ok {
			continue
		}
		j, err := parseJournal(b)
		if err != nil || j.ID+".json" != name || !ownerDead(j.Owner) {
			continue
		}
		// Claimed by a rename, so that two runs sweeping at once do not
		// both undo it.
		claim := p + ".sweep-" + s.id
		if os.Rename(p, claim) != nil {
			continue
		}
		s.undoJournal(root, j)
		_ = os.Remove(claim)
	}
}

// crashedDetail opens the Detail of what a crashed run left.
func crashedDetail(j *runJournal) string {
	return fmt.Sprintf("left by the run of sandbox %s (process %d), which ended without closing (killed or crashed)", j.ID, j.Owner.Pid)
}

// undoJournal quarantines what a dead run created at the top of its
// places and removes its placeholders.
func (s *Sandbox) undoJournal(root string, j *runJournal) {
	budget := newCopyBudget()
	for _, pl := range j.Places {
		fi, err := os.Lstat(pl.Path)
		if err != nil || !fi.IsDir() {
			continue
		}
		present := map[journalEntry]bool{}
		for _, e := range pl.Present {
			present[e] = true
		}
		entries, err := os.ReadDir(pl.Path)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !isTopControlName(e.Name()) {
				continue
			}
			p := filepath.Join(pl.Path, e.Name())
			dev, ino, err := fileIdentity(p)
			if err != nil || present[journalEntry{Name: e.Name(), Dev: dev, Ino: ino}] {
				continue // existed at the dead run's start: never touched
			}
			if e.Name() == ".git" && s.undoNewRepo(root, j, pl.Path, p, budget) {
				continue
			}
			name := e.Name()
			if i := strings.Index(name, ".moat-quarantine-"); i > 0 {
				name = name[:i] // set aside in the place by that run's Close
			}
			dest, err := quarantine(root, j.ID, pl.Path, p, name, budget)
			r := Refusal{Kind: "control-path", Subject: filepath.Join(pl.Path, name)}
			if err != nil {
				r.Detail = fmt.Sprintf("%s, and could not be moved to the quarantine: %v; remove it before running moat or git here", crashedDetail(j), err)
			} else {
				r.Detail = crashedDetail(j) + "; moved to " + dest
			}
			s.addRefusal(r)
		}
	}
	for _, pl := range j.Places {
		s.undoNestedRepos(root, j, pl, budget)
	}
	for _, pl := range j.Places {
		// The hooks/ and config placeholders that run's engine made in
		// the repositories of the place (each marked with its owner).
		seen := map[string]bool{}
		for _, p := range gitguard.Take([]string{pl.Path}).Paths() {
			g := filepath.Dir(p)
			if b := filepath.Base(p); b != "hooks" && b != "config" || seen[g] {
				continue
			}
			seen[g] = true
			for _, f := range sweepGitPlaceholders(g) {
				s.addRefusal(Refusal{Kind: "control-path", Subject: f, Detail: crashedDetail(j) + "; a placeholder of that run, removed"})
			}
		}
	}
	for _, pl := range j.Places {
		s.undoNewControls(root, j, pl, budget)
	}
	for _, d := range j.Deny {
		if sweepDenyPlaceholder(d.Path) {
			s.addRefusal(Refusal{Kind: "control-path", Subject: d.Path, Detail: crashedDetail(j) + "; its placeholder for a denied path, removed"})
		}
		for i := len(d.Made) - 1; i >= 0; i-- {
			_ = os.Remove(d.Made[i]) // only when empty
		}
	}
}

// quarantineDir is where sandbox id's entries of place go.
func quarantineDir(root, id, place string) string {
	return filepath.Join(root, "quarantine", id, escapePlace(place))
}

// escapePlace turns a place's path into one file name: every byte but
// letters, digits, '.', '_' and '-' becomes %XX ("/" is %2F).
func escapePlace(place string) string {
	var b strings.Builder
	for i := 0; i < len(place); i++ {
		c := place[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// The quarantine copies an entry when the place and the state directory
// lie on different file systems. What it copies was written by a
// sandbox, so the copies of one Close or one sweep have a bound: bytes
// (a sparse file, or many hard links of one, would otherwise cost their
// full size each) and entries. Past it the copy is undone and the entry
// stays set aside in its place, under its quarantine name, and is
// reported; the journal is kept, so the next run tries again.
const (
	maxQuarantineCopyBytes   = 256 << 20
	maxQuarantineCopyEntries = 100000
)

// copyBudget is what copies may still cost; the zero value allows none.
type copyBudget struct {
	bytes   int64
	entries int
}

func newCopyBudget() *copyBudget {
	return &copyBudget{bytes: maxQuarantineCopyBytes, entries: maxQuarantineCopyEntries}
}

// quarantine moves p, an entry inside place, to the quarantine as rel
// (its path relative to the place, named as before it was set aside), and
// returns where it went. It never replaces anything there. A copy across
// file systems spends b.
func quarantine(root, id, place, p, rel string, b *copyBudget) (string, error) {
	base := quarantineDir(root, id, place)
	dest := filepath.Join(base, rel)
	if !strings.HasPrefix(dest, base+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is not inside %s", rel, place)
	}
	if _, err := stateSub(root, "quarantine"); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o700); err != nil {
		return "", err
	}
	for i := 0; ; i++ {
		d := dest
		if i > 0 {
			d = fmt.Sprintf("%s.%d", dest, i)
		}
		if _, err := os.Lstat(d); err == nil {
			if i > 100 {
				return "", fmt.Errorf("every name like %s.N is taken", dest)
			}
			continue
		}
		dest = d
		break
	}
	err := os.Rename(p, dest)
	if errors.Is(err, fs.ErrPermission) && hostiletree.MakeOwnersDir(p) == nil {
		// A directory the sandbox left unwritable (0500): moving it to
		// another parent rewrites its "..".
		err = os.Rename(p, dest)
	}
	if err != nil && isCrossDevice(err) {
		if err = copyTree(p, dest, b); err == nil {
			// The original is the sandbox's tree: it may hold
			// directories left unwritable or unsearchable.
			budget := 2 * maxQuarantineCopyEntries
			err = hostiletree.RemoveTree(p, &budget)
		} else {
			_ = os.RemoveAll(dest) // the original stays where it was
		}
	}
	if err != nil {
		return "", err
	}
	return dest, nil
}

// copyTree copies src to dst, which must not exist, without following
// links, spending b; anything but directories, regular files and links
// is refused.
func copyTree(src, dst string, b *copyBudget) error {
	fi, err := os.Lstat(src)
	if err != nil {
		return err
	}
	b.entries--
	if fi.Mode().IsRegular() {
		b.bytes -= fi.Size()
	}
	if b.entries < 0 || b.bytes < 0 {
		return fmt.Errorf("copying it to another file system would take more than %d entries or %d bytes", maxQuarantineCopyEntries, maxQuarantineCopyBytes)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		t, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(t, dst)
	case fi.IsDir():
		if err := os.Mkdir(dst, 0o700); err != nil {
			return err
		}
		entries, err := os.ReadDir(src)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if err := copyTree(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name()), b); err != nil {
				return err
			}
		}
		return os.Chmod(dst, fi.Mode().Perm()|0o700)
	case fi.Mode().IsRegular():
		in, err := os.Open(src)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm()&0o700|0o600)
		if err != nil {
			return err
		}
		_, err = io.Copy(out, io.LimitReader(in, fi.Size())) // no more than was counted
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		return err
	}
	return fmt.Errorf("%s is neither a file, a directory nor a link", src)
}

// quarantineFindings moves what Close set aside in the places into the
// quarantine, and rewrites each finding to say where it went.
func (s *Sandbox) quarantineFindings(found []gitguard.Finding) []gitguard.Finding {
	if s.journal == nil {
		return found
	}
	places := s.gitPlaces()
	sort.Slice(places, func(i, j int) bool { return len(places[i]) > len(places[j]) })
	budget := newCopyBudget()
	for i, f := range found {
		if f.MovedTo == "" {
			continue
		}
		place := ""
		for _, w := range places {
			if strings.HasPrefix(f.Path, strings.TrimSuffix(w, string(filepath.Separator))+string(filepath.Separator)) {
				place = w
				break
			}
		}
		if place == "" {
			continue
		}
		rel, err := filepath.Rel(place, f.Path)
		if err != nil {
			continue
		}
		dest, err := quarantine(s.journal.root, s.id, place, f.MovedTo, rel, budget)
		if err != nil {
			found[i].Detail += fmt.Sprintf("; it could not be moved out of %s to the quarantine: %v (the next run retries)", place, err)
			s.journal.keep = true // swept once this process is gone
			continue
		}
		found[i].Detail = strings.Replace(f.Detail, "moved to "+f.MovedTo, "moved to "+dest, 1)
		found[i].MovedTo = dest
	}
	return found
}

// readOwnFile reads a small regular file of this user's, not through a
// link.
func readOwnFile(p string) ([]byte, bool) {
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxJournalSize || fi.Mode().Perm()&0o077 != 0 {
		return nil, false
	}
	if !ownedByMe(fi) {
		return nil, false
	}
	b, err := os.ReadFile(p)
	return b, err == nil
}

// protectStateRoot adds the moat state directory (journals, quarantine)
// to the view's protected paths, so that no level or grant of a parent
// shows it to a sandbox; a grant of the directory itself wins, as for
// every protected path.
func (s *Sandbox) protectStateRoot(v spec.View) spec.View {
	root, err := moatStateRoot()
	if err != nil {
		return v
	}
	v = protectPath(protectPath(v, root), s.caches.Root(cacheLayout)) // internal/cachehome, caches.go
	for _, r := range cachehome.RecordedRoots(root) {                 // internal/cachehome
		v = protectPath(v, r)
	}
	return v
}

// protectPath adds root to v's protected paths unless one of them holds
// it already.
func protectPath(v spec.View, root string) spec.View {
	if root == "" {
		return v
	}
	for _, p := range v.Protected {
		if p == root || strings.HasPrefix(root, p+"/") {
			return v
		}
	}
	v.Protected = append(v.Protected, root)
	return v
}

// nestedRepos lists the .git entries below the top of place that the
// git snapshot found at start.
func (s *Sandbox) nestedRepos(place string) []string {
	if s.gitSnap == nil {
		return nil
	}
	var out []string
	for _, p := range s.gitSnap.Paths() {
		if filepath.Base(p) == ".git" && filepath.Dir(p) != place && strings.HasPrefix(p, place+"/") {
			out = append(out, p)
		}
	}
	return out
}

// undoNestedRepos quarantines the .git entries below the top of a dead
// run's place that were not there at its start (a repository the sandbox
// made in a subdirectory), outermost first.
func (s *Sandbox) undoNestedRepos(root string, j *runJournal, pl journalPlace, budget *copyBudget) {
	had := map[string]bool{}
	for _, r := range pl.Repos {
		had[r] = true
	}
	var found []string
	for _, p := range gitguard.Take([]string{pl.Path}).Paths() {
		if filepath.Base(p) == ".git" && filepath.Dir(p) != pl.Path && !had[p] {
			found = append(found, p)
		}
	}
	sort.Slice(found, func(a, b int) bool { return strings.Count(found[a], "/") < strings.Count(found[b], "/") })
	var moved []string
	for _, p := range found {
		inside := false
		for _, m := range moved {
			inside = inside || strings.HasPrefix(p, m+"/")
		}
		if inside {
			continue
		}
		rel, err := filepath.Rel(pl.Path, p)
		if err != nil {
			continue
		}
		if s.undoNewRepo(root, j, pl.Path, p, budget) {
			moved = append(moved, p)
			continue
		}
		r := Refusal{Kind: "control-path", Subject: p}
		dest, err := quarantine(root, j.ID, pl.Path, p, rel, budget)
		if err != nil {
			r.Detail = fmt.Sprintf("%s, and could not be moved to the quarantine: %v; remove it before running git here", crashedDetail(j), err)
		} else {
			r.Detail = crashedDetail(j) + "; moved to " + dest
			moved = append(moved, p)
		}
		s.addRefusal(r)
	}
}

// undoNewRepo does for p, a .git directory a dead run created in place,
// what that run's Close would have done (gitguard.NeutraliseNew): a
// repository keeps its work and only its control paths go to the
// quarantine; anything else named .git goes there whole. It reports
// false when p is no directory, for the caller to move it.
func (s *Sandbox) undoNewRepo(root string, j *runJournal, place, p string, budget *copyBudget) bool {
	if fi, err := os.Lstat(p); err != nil || !fi.IsDir() {
		return false
	}
	if s.sweptRepos == nil {
		s.sweptRepos = map[string]bool{}
	}
	s.sweptRepos[p] = true // undoNewControls leaves what is in it: done here
	for _, f := range gitguard.NeutraliseNew(place, p, s.quarantineSuffix()) {
		r := Refusal{Kind: "control-path", Subject: f.Path, Detail: crashedDetail(j) + "; " + f.Detail}
		if f.MovedTo != "" {
			rel, err := filepath.Rel(place, f.Path)
			if err == nil {
				var dest string
				if dest, err = quarantine(root, j.ID, place, f.MovedTo, rel, budget); err == nil {
					r.Detail = crashedDetail(j) + "; " + strings.Replace(f.Detail, "moved to "+f.MovedTo, "moved to "+dest, 1)
				}
			}
			if err != nil {
				r.Detail += fmt.Sprintf("; it could not be moved out of %s to the quarantine: %v", place, err)
			}
		}
		s.addRefusal(r)
	}
	return true
}
