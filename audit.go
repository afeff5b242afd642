package moat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/moat-sandbox/moat/internal/auditlog"
	"github.com/moat-sandbox/moat/internal/fileid"
	"github.com/moat-sandbox/moat/internal/hostview"
	"github.com/moat-sandbox/moat/internal/paths"
	"github.com/moat-sandbox/moat/internal/proxy"
)

// This file is the audit log's public face; internal/auditlog writes the
// lines, rotates the daily files and throttles each sandbox's share.

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
	l *auditlog.Log // nil for the zero value
}

// OpenAuditLog opens the file at path for appending audit lines, creating it
// with mode 0600 if it does not exist. It never truncates the file, so
// reopening it continues it. The directory that holds it must exist; it is
// not created.
func OpenAuditLog(path string) (*NetworkAuditLog, error) {
	l, err := auditlog.Open(path)
	if err != nil {
		return nil, err
	}
	return &NetworkAuditLog{l: l}, nil
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
	l, err := auditlog.OpenDaily(dir, maxFiles, time.Now)
	if err != nil {
		return nil, err
	}
	return &NetworkAuditLog{l: l}, nil
}

// newAuditLogWriter returns a log that writes to w and does not close it.
func newAuditLogWriter(w io.Writer, now func() time.Time) *NetworkAuditLog {
	return &NetworkAuditLog{l: auditlog.NewWriter(w, now)}
}

// log returns l's log, nil for a nil or zero NetworkAuditLog.
func (l *NetworkAuditLog) log() *auditlog.Log {
	if l == nil {
		return nil
	}
	return l.l
}

// Record writes r as one line and returns once the line has been handed to
// the operating system in a single write, so a caller that proceeds only on
// a nil error never acts on an unrecorded decision. (It does not wait for
// the disk: the line survives the process, not a power cut.) An error, such
// as a full disk or a closed log, means the line was not written and the
// connection must be refused. Concurrent calls never interleave or lose
// lines.
func (l *NetworkAuditLog) Record(r AuditRecord) error {
	return l.log().Record(auditlog.Record(r)) // the conversion keeps the two field lists in step
}

// Close closes the log's file. Later calls to Record return an error; later
// calls to Close return nil.
func (l *NetworkAuditLog) Close() error { return l.log().Close() }

// AuditedPolicy is a [NetworkPolicy] whose decisions are recorded in a
// [NetworkAuditLog]. Make one with [Audited]; the zero value denies
// everything and records nothing.
//
// The line is written by the sandbox's proxy, not by Decide: the proxy
// writes one line per final decision, after its own refusal of local
// addresses and after resolving the name (so the line carries the IP it is
// about to dial), and it opens the connection only if the line was written.
// A failed write refuses the connection. Calling Decide outside a sandbox
// writes nothing. A policy that denies everything runs no proxy, so its
// refusals, made by the kernel, are not recorded. The zero value denies
// everything and records nothing; use [Audited].
type AuditedPolicy struct {
	inner NetworkPolicy
	log   *NetworkAuditLog
}

// Audited returns inner with every decision recorded in log. A nil inner
// means [DenyAll]. Audited panics if log is nil. Wrapping an audited policy
// again records each decision in both logs.
func Audited(inner NetworkPolicy, log *NetworkAuditLog) *AuditedPolicy {
	if log == nil {
		panic("moat: Audited: nil audit log")
	}
	return &AuditedPolicy{inner: inner, log: log}
}

// Decide returns the wrapped policy's decision; see [AuditedPolicy] for
// where it is recorded.
func (a *AuditedPolicy) Decide(ctx context.Context, r NetworkRequest) NetworkDecision {
	if a == nil || a.inner == nil {
		return denyAll{}.Decide(ctx, r)
	}
	return a.inner.Decide(ctx, r)
}

// DeniesAll reports whether the wrapped policy denies everything.
func (a *AuditedPolicy) DeniesAll() bool { return a == nil || NetworkDeniesAll(a.inner) }

// Policy returns the wrapped policy, nil meaning [DenyAll].
func (a *AuditedPolicy) Policy() NetworkPolicy {
	if a == nil {
		return nil
	}
	return a.inner
}

// Log returns the log that the decisions are recorded in, nil for the zero
// value.
func (a *AuditedPolicy) Log() *NetworkAuditLog {
	if a == nil {
		return nil
	}
	return a.log
}

// auditLogs returns the logs of every Audited wrapper around p, outermost
// first.
func auditLogs(p NetworkPolicy) []*NetworkAuditLog {
	var logs []*NetworkAuditLog
	for {
		a, ok := p.(*AuditedPolicy)
		if !ok || a == nil {
			return logs
		}
		if a.log != nil {
			logs = append(logs, a.log)
		}
		p = a.inner
	}
}

// auditNetwork records r, the proxy's final decision for sandbox id, in
// every audit log of policy p, unthrottled (internal/auditlog/throttle.go throttles
// the proxy's). A non-nil error means the connection must be refused.
func auditNetwork(p NetworkPolicy, id string, r AuditRecord) error {
	if h, _, err := normalizeHost(r.Host); err == nil {
		r.Host = h
	}
	r.Sandbox = id
	for _, l := range auditLogs(p) {
		if err := l.Record(r); err != nil {
			return err
		}
	}
	return nil
}

// writeAuditLine writes line, one encoded record, to every audit log of
// policy p.
func writeAuditLine(p NetworkPolicy, line []byte) error {
	for _, l := range auditLogs(p) {
		if err := l.log().WriteLine(line); err != nil {
			return err
		}
	}
	return nil
}

// newAuditThrottle returns the audit writer of sandbox id, built from cfg
// (see internal/auditlog.Throttle): its lines go to every log of cfg's
// policy, within the budget of its disk limit.
func newAuditThrottle(id string, cfg *Config) *auditlog.Throttle {
	var write func([]byte) error
	if len(auditLogs(cfg.Network)) > 0 {
		network := cfg.Network
		write = func(line []byte) error { return writeAuditLine(network, line) }
	}
	return auditlog.NewThrottle(id, auditlog.Budget(cfg.Limits.DiskBytes), write)
}

// isAuditFull reports whether err refused a connection for a full log.
func isAuditFull(err error) bool { return errors.Is(err, proxy.ErrAuditFull) }

// auditLogTarget returns the file or directory that cfg's audit log
// writes to, "" when there is none or it is not a file (a writer).
func auditLogTarget(cfg *Config) string {
	a, ok := cfg.Network.(*AuditedPolicy)
	if !ok || a == nil {
		return ""
	}
	return a.log.log().Target()
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
// one; [New] checks it again. The same holds for any other file written on
// the host for the caller that the caller then trusts, such as
// `moat run --report-json`'s report (its [PlaceError]'s Problem applies).
func CheckAuditLogPath(path string, cfg Config) error {
	return checkHostFilePath("audit log", path, cfg)
}

// checkHostFilePath is [CheckAuditLogPath] for any file that moat writes
// on the host for its caller and that the caller then trusts: subject
// names it in the [PlaceError]. An empty path is nil.
func checkHostFilePath(subject, path string, cfg Config) error {
	if path == "" {
		return nil
	}
	target := resolveAuditPath(path)
	refuse := func(format string, args ...any) error {
		return &PlaceError{Subject: subject, Path: path, Problem: fmt.Sprintf(format, args...) + "; keep it where the sandbox cannot write"}
	}
	past, err := pastPlaces() // paths.go
	if err != nil {
		return err
	}
	if link := plantedLink(path, past); link != "" {
		return refuse("it passes through the link %s, in a place a sandbox of an earlier run could write, which may have planted it", link)
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
