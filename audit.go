package moat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/moat-sandbox/moat/internal/fileid"
	"github.com/moat-sandbox/moat/internal/hostview"

	"github.com/moat-sandbox/moat/internal/paths"
)

// AuditRecord is one network decision as written to a [NetworkAuditLog].
// The zero value is a denial of an unnamed host, stamped with the time it
// is written.
type AuditRecord struct {
	// Time is when the decision was taken. The zero value means the time
	// the record is written.
	Time time.Time

	// Sandbox is the identifier of the sandbox that asked. Empty is written
	// as an empty string.
	Sandbox string

	// Protocol is "http", "connect" or "socks5", as in
	// [NetworkRequest.Protocol]. Empty means unknown.
	Protocol string

	// Host and Port are the destination as the client named it.
	Host string
	Port int

	// IP is the address the proxy resolved the host to and is about to
	// dial. The zero value, as for a request denied before resolving, is
	// left out of the line.
	IP netip.Addr

	// Allowed is the final decision: whether the connection proceeds.
	Allowed bool

	// Reason says why, in a few words.
	Reason string

	// Repeated, when above zero, makes the line an aggregate: this many
	// more decisions like this one (same protocol, host, port, address,
	// decision and reason), the last of them at Time, were taken since
	// the previous line for them and not written one by one. A sandbox's
	// proxy writes the first few decisions of each kind in full and then
	// only such counts (see GUARANTEES.md). Zero is an ordinary line, and
	// the key is left out.
	Repeated int64
}

// auditLine is the JSON form of an AuditRecord; the field order is the
// order of the keys in the line.
type auditLine struct {
	Timestamp string `json:"timestamp"`
	Sandbox   string `json:"sandbox"`
	Protocol  string `json:"protocol"`
	Host      string `json:"host"`
	Port      int    `json:"port"`
	IP        string `json:"ip,omitempty"`
	Allowed   bool   `json:"allowed"`
	Reason    string `json:"reason"`
	Repeated  int64  `json:"repeated,omitempty"`
}

// auditTimeFormat is RFC 3339 with milliseconds.
const auditTimeFormat = "2006-01-02T15:04:05.000Z07:00"

// Daily audit files are named auditFilePrefix + YYYY-MM-DD + auditFileSuffix.
const (
	auditFilePrefix = "network-audit."
	auditFileSuffix = ".jsonl"
	auditDateFormat = "2006-01-02"
)

// NetworkAuditLog records network decisions as JSON Lines, one object per
// decision:
//
//	{"timestamp":"2025-01-02T03:04:05.678Z","sandbox":"a1b2c3d4e5f6","protocol":"connect","host":"example.com","port":443,"ip":"93.184.215.14","allowed":true,"reason":"matches \"example.com\""}
//
// timestamp is RFC 3339 in UTC with milliseconds; ip is left out when no
// address was resolved. Use it through [Audited]. Open one with
// [OpenAuditLog] or [OpenDailyAuditLog] and close it with
// [NetworkAuditLog.Close] once no sandbox uses it. Its methods are safe for
// concurrent use, by any number of sandboxes. The zero value is not usable:
// [NetworkAuditLog.Record] on it returns an error.
type NetworkAuditLog struct {
	mu     sync.Mutex
	w      io.Writer // the current destination; nil when unusable
	c      io.Closer // closes w; nil when w is not ours to close
	name   string    // the file or directory, for messages
	now    func() time.Time
	closed bool

	// Daily rotation; dir is empty for a single file.
	dir      string
	maxFiles int
	day      string // date of the open file, auditDateFormat
}

// OpenAuditLog opens the file at path for appending audit lines, creating it
// with mode 0600 if it does not exist. It never truncates the file, so
// reopening it continues it. The directory that holds it must exist; it is
// not created.
func OpenAuditLog(path string) (*NetworkAuditLog, error) {
	if path == "" {
		return nil, errorf("audit log %q: empty path", path)
	}
	if err := checkAuditDir(path, filepath.Dir(path)); err != nil {
		return nil, err
	}
	f, err := openAuditFile(path)
	if err != nil {
		return nil, err
	}
	return &NetworkAuditLog{w: f, c: f, name: path, now: time.Now}, nil
}

// OpenDailyAuditLog opens a log that writes to one file a day in dir, named
// network-audit.YYYY-MM-DD.jsonl after the UTC date, switching files when
// the date changes (the date at the moment a line is written picks its
// file). Files are created with mode 0600 and appended to, never
// truncated. When it opens a file it deletes the oldest files of that name
// pattern in dir until at most maxFiles remain, the open one included; other
// files in dir are never touched. maxFiles 0 keeps every file; a negative
// maxFiles is an error. dir must exist; it is not created.
func OpenDailyAuditLog(dir string, maxFiles int) (*NetworkAuditLog, error) {
	return openDailyAuditLog(dir, maxFiles, time.Now)
}

// openDailyAuditLog is OpenDailyAuditLog with a clock.
func openDailyAuditLog(dir string, maxFiles int, now func() time.Time) (*NetworkAuditLog, error) {
	if dir == "" {
		return nil, errorf("audit log directory %q: empty path", dir)
	}
	if maxFiles < 0 {
		return nil, errorf("audit log directory %q: max files %d: want 0 (keep all) or more", dir, maxFiles)
	}
	if err := checkAuditDir(dir, dir); err != nil {
		return nil, err
	}
	l := &NetworkAuditLog{name: dir, now: now, dir: dir, maxFiles: maxFiles}
	if err := l.rotate(now()); err != nil {
		return nil, err
	}
	return l, nil
}

// newAuditLogWriter returns a log that writes to w and does not close it.
func newAuditLogWriter(w io.Writer, now func() time.Time) *NetworkAuditLog {
	return &NetworkAuditLog{w: w, name: "writer", now: now}
}

// checkAuditDir checks that dir, where the log name will live, is an
// existing directory.
func checkAuditDir(name, dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return errorf("audit log %q: directory %q does not exist", name, dir)
		}
		return errorf("audit log %q: %w", name, err)
	}
	if !fi.IsDir() {
		return errorf("audit log %q: %q is not a directory", name, dir)
	}
	return nil
}

func openAuditFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, errorf("audit log %q: %w", path, err)
	}
	return f, nil
}

// Record writes r as one line and returns once the line has been handed to
// the operating system in a single write, so a caller that proceeds only on
// a nil error never acts on an unrecorded decision. (It does not wait for
// the disk: the line survives the process, not a power cut.) An error, such
// as a full disk or a closed log, means the line was not written and the
// connection must be refused. Concurrent calls never interleave or lose
// lines.
func (l *NetworkAuditLog) Record(r AuditRecord) error {
	if l == nil || l.now == nil {
		return errorf("audit log: not opened")
	}
	line, err := encodeAuditRecord(r, l.now)
	if err != nil {
		return errorf("audit log %q: %w", l.name, err)
	}
	return l.writeLine(line)
}

// writeLine writes line, one encoded record, as Record does.
func (l *NetworkAuditLog) writeLine(line []byte) error {
	if l == nil || l.now == nil {
		return errorf("audit log: not opened")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return errorf("audit log %q: closed", l.name)
	}
	if l.dir != "" {
		if err := l.rotate(l.now()); err != nil {
			return err
		}
	}
	if l.w == nil {
		return errorf("audit log %q: no open file", l.name)
	}
	n, err := l.w.Write(line)
	if err == nil && n != len(line) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return errorf("audit log %q: write: %w", l.name, err)
	}
	return nil
}

// encodeAuditRecord returns r as a JSON line ending in a newline.
func encodeAuditRecord(r AuditRecord, now func() time.Time) ([]byte, error) {
	t := r.Time
	if t.IsZero() {
		t = now()
	}
	a := auditLine{
		Timestamp: t.UTC().Format(auditTimeFormat),
		Sandbox:   r.Sandbox,
		Protocol:  r.Protocol,
		Host:      r.Host,
		Port:      r.Port,
		Allowed:   r.Allowed,
		Reason:    r.Reason,
		Repeated:  max(r.Repeated, 0),
	}
	if r.IP.IsValid() {
		a.IP = r.IP.String()
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(a); err != nil { // Encode ends the line with '\n'
		return nil, err
	}
	return buf.Bytes(), nil
}

// rotate makes sure the file for the UTC date of now is open, and prunes old
// files when it opens one. It is called with l.mu held.
func (l *NetworkAuditLog) rotate(now time.Time) error {
	day := now.UTC().Format(auditDateFormat)
	if day == l.day && l.w != nil {
		return nil
	}
	path := filepath.Join(l.dir, auditFilePrefix+day+auditFileSuffix)
	f, err := openAuditFile(path)
	if err != nil {
		return err
	}
	if l.c != nil {
		_ = l.c.Close() // every line was written with a single write
	}
	l.w, l.c, l.day = f, f, day
	l.prune()
	return nil
}

// prune deletes the oldest daily files in l.dir beyond l.maxFiles, never
// the open one. Failures are ignored: they cost disk space, not records.
func (l *NetworkAuditLog) prune() {
	if l.maxFiles == 0 {
		return
	}
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return
	}
	current := auditFilePrefix + l.day + auditFileSuffix
	var old []string
	for _, e := range entries {
		if n := e.Name(); n != current && e.Type().IsRegular() && isDailyAuditName(n) {
			old = append(old, n)
		}
	}
	sort.Strings(old) // the date format sorts chronologically
	for i := 0; i < len(old)+1-l.maxFiles; i++ {
		_ = os.Remove(filepath.Join(l.dir, old[i]))
	}
}

// isDailyAuditName reports whether name is network-audit.YYYY-MM-DD.jsonl
// with a real date.
func isDailyAuditName(name string) bool {
	date, ok := strings.CutPrefix(name, auditFilePrefix)
	if !ok {
		return false
	}
	date, ok = strings.CutSuffix(date, auditFileSuffix)
	if !ok || len(date) != len(auditDateFormat) {
		return false
	}
	t, err := time.Parse(auditDateFormat, date)
	return err == nil && t.Format(auditDateFormat) == date
}

// Close closes the log's file. Later calls to Record return an error; later
// calls to Close return nil.
func (l *NetworkAuditLog) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	var err error
	if l.c != nil {
		if cerr := l.c.Close(); cerr != nil {
			err = errorf("audit log %q: close: %w", l.name, cerr)
		}
	}
	l.w, l.c = nil, nil
	return err
}

// auditLogTarget returns the file or directory that cfg's audit log
// writes to, "" when there is none or it is not a file (a writer).
func auditLogTarget(cfg *Config) string {
	a, ok := cfg.Network.(*AuditedPolicy)
	if !ok || a == nil || a.log == nil || a.log.now == nil || a.log.name == "writer" {
		return ""
	}
	if a.log.dir != "" {
		return a.log.dir
	}
	return a.log.name
}

// checkAuditLogPlace refuses cfg's audit log when the sandbox could write
// it; see CheckAuditLogPath.
func checkAuditLogPlace(cfg *Config) error {
	if p := auditLogTarget(cfg); p != "" {
		return CheckAuditLogPath(p, *cfg)
	}
	return nil
}

// CheckAuditLogPath reports why path, a network audit log file or a daily
// log's directory, cannot record the decisions of a sandbox built from cfg,
// or nil: the sandboxed code could rewrite or erase its own record. It is
// refused when it lies, once every link on the way is followed, in cfg's
// supplied working directory, its kept home or a writable grant (or is
// one), and at
// [IsolationPermissive] unless a protection hides it, since that level
// lets the sandbox write every file the user can. An existing log with
// other hard links is refused too: one of them may be in such a place.
// Call it before opening the log, so that nothing is created for a refused
// one; [New] checks it again.
func CheckAuditLogPath(path string, cfg Config) error {
	return CheckHostFilePath("audit log", path, cfg)
}

// CheckHostFilePath is [CheckAuditLogPath] for any file that moat writes
// on the host for its caller and that the caller then trusts, such as the
// audit log or `moat run --report-json`'s report: subject names it in the
// [PlaceError]. An empty path is nil.
func CheckHostFilePath(subject, path string, cfg Config) error {
	if path == "" {
		return nil
	}
	target := resolveAuditPath(path)
	refuse := func(format string, args ...any) error {
		return &PlaceError{Subject: subject, Path: path, Problem: fmt.Sprintf(format, args...) + "; keep it where the sandbox cannot write"}
	}
	var places []struct{ what, path string }
	if cfg.WorkDir != "" {
		places = append(places, struct{ what, path string }{"the working directory", cfg.WorkDir})
	}
	if cfg.Home != "" {
		places = append(places, struct{ what, path string }{"the sandbox's home", cfg.Home})
	}
	for _, g := range cfg.Grants {
		if g.Access&WRITE != 0 {
			places = append(places, struct{ what, path string }{"the writable grant", g.Path})
		}
	}
	for _, pl := range places {
		abs, err := filepath.Abs(pl.path)
		if err != nil {
			continue
		}
		r := resolveAuditPath(abs)
		if target == r || strings.HasPrefix(target, strings.TrimSuffix(r, "/")+"/") {
			return refuse("it is in %s %s, which the sandbox can write", pl.what, pl.path)
		}
	}
	if cfg.Isolation == IsolationPermissive && !auditLogProtected(target, cfg) {
		return refuse("at isolation permissive the sandbox can write every file you can")
	}
	if n := fileid.HardLinks(target); n > 1 {
		return refuse("the file has %d hard links, and the sandbox may be able to write another of them", n)
	}
	return nil
}

// auditLogProtected reports whether target, resolved, lies in a path that
// cfg's protections hide from a permissive sandbox. A protected path that
// a grant names is exposed as granted (see internal/hostview.View), so it hides
// nothing here.
func auditLogProtected(target string, cfg Config) bool {
	granted := map[string]bool{}
	for _, g := range cfg.Grants {
		granted[resolveAuditPath(g.Path)] = true
	}
	sec := cfg.security()
	for _, h := range hostview.AllHomes(hostview.OwnHome()) {
		for _, p := range sec.ProtectedPaths(h) {
			if r := resolveAuditPath(p); !granted[r] && paths.Under(target, r) {
				return true
			}
		}
	}
	return false
}

// resolveAuditPath resolves every link of p that exists, the last one
// included (opening the log follows it).
func resolveAuditPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	p = hostview.ResolveExisting(p)
	// A dangling last link is followed too: opening the log creates its
	// target.
	for i := 0; i < 40; i++ {
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			break
		}
		t, err := os.Readlink(p)
		if err != nil {
			break
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(p), t)
		}
		p = hostview.ResolveExisting(filepath.Clean(t))
	}
	return p
}
