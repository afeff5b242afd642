package runjournal

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/moat-sandbox/moat/internal/bytestr"
	"github.com/moat-sandbox/moat/internal/fileid"
	"github.com/moat-sandbox/moat/internal/gitguard"
)

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
		dev, ino, err := fileid.Identity(filepath.Join(place, e.Name()))
		if err != nil {
			continue
		}
		out = append(out, journalEntry{Name: e.Name(), Dev: dev, Ino: ino})
	}
	return out
}
