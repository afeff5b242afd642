package session

import (
	"os"
	"sync"
	"time"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/report/jsonv1"
	"github.com/moat-sandbox/moat/policy"
)

// Session is one long-lived sandbox, made by [Manager.Create]. The zero
// value is unusable.
type Session struct {
	id, name string
	m        *Manager
	policy   string
	result   policy.Result // narrowed
	summary  Summary
	sb       *moat.Sandbox
	resolved policy.Resolved // its audit log, closed after the sandbox
	files    *Files          // nil until the file API starts
	created  time.Time
	memory   int64 // counted against Options.MaxTotalMemory
	ownDir   bool  // the policy names its own working directory
	cap      int   // Options.OutputCap
	// outBudget is what the background processes' output may keep
	// together (outbudget.go); s.mu guards it.
	outBudget int64

	mu       sync.Mutex
	lastUsed time.Time
	closed   bool
	procs    map[string]*proc
	order    []string
	nextProc int
	running  int // Runs in progress, which keep the idle timeout off

	closeOnce sync.Once
	final     jsonv1.Document // the report made at Close
	closeErr  *Error
}

// touch refuses a call on a closed session and notes the call for the
// idle timeout.
func (s *Session) touch() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed(s.id)
	}
	s.lastUsed = time.Now()
	return nil
}

// ID is the session's identifier.
func (s *Session) ID() string { return s.id }

// Info describes s.
func (s *Session) Info() Info {
	s.mu.Lock()
	last := s.lastUsed
	s.mu.Unlock()
	return Info{
		ID:        s.id,
		Name:      s.name,
		Policy:    s.policy,
		WorkDir:   s.sb.WorkDir(),
		Created:   stamp(s.created),
		LastUsed:  stamp(last),
		ExpiresAt: stamp(s.expires(last)),
		Allows:    s.summary,
	}
}

// expires is when the reaper closes s, given its last call.
func (s *Session) expires(last time.Time) time.Time {
	idle := last.Add(s.m.opt.IdleTimeout)
	life := s.created.Add(s.m.opt.MaxLifetime)
	if idle.Before(life) {
		return idle
	}
	return life
}

// stamp is t as Info spells times: RFC 3339 in UTC.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// Sandbox is the session's sandbox, for the Python interpreter of moat
// mcp; nil never.
func (s *Session) Sandbox() *moat.Sandbox { return s.sb }

// ReadFile reads up to max bytes of the file at path (the file API).
func (s *Session) ReadFile(path string, max int64) ([]byte, FileInfo, error) {
	f, err := s.fileAPI()
	if err != nil {
		return nil, FileInfo{}, err
	}
	return f.Read(path, max)
}

// WriteFile replaces the file at path with data (the file API).
func (s *Session) WriteFile(path string, data []byte, mode os.FileMode) (FileInfo, error) {
	f, err := s.fileAPI()
	if err != nil {
		return FileInfo{}, err
	}
	return f.Write(path, data, mode)
}

// List lists the directory at path, at most 10,000 entries; see
// ListTruncated for whether there were more.
func (s *Session) List(path string) ([]FileInfo, error) {
	l, _, err := s.ListTruncated(path)
	return l, err
}

// ListTruncated lists the directory at path and says whether entries
// were left out past the bound.
func (s *Session) ListTruncated(path string) ([]FileInfo, bool, error) {
	f, err := s.fileAPI()
	if err != nil {
		return nil, false, err
	}
	return f.List(path)
}

// Stat describes path, never following a final link.
func (s *Session) Stat(path string) (FileInfo, error) {
	f, err := s.fileAPI()
	if err != nil {
		return FileInfo{}, err
	}
	return f.Stat(path)
}

// fileAPI is the session's file API, started on first use.
func (s *Session) fileAPI() (*Files, error) {
	if err := s.touch(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.files != nil {
		return s.files, nil
	}
	f, err := StartFiles(s.sb, s.places(), FileLimits{CommandTimeout: s.resolved.Config.Limits.Timeout, SandboxFileSize: s.resolved.Config.Limits.FileSizeBytes})
	if err != nil {
		if e, ok := err.(*Error); ok {
			return nil, e
		}
		return nil, internalError("file API", err)
	}
	s.files = f
	return f, nil
}

// places are the working directory and the grants, for the file API.
func (s *Session) places() []Place {
	p := []Place{{Path: s.sb.WorkDir(), Writable: true}}
	for _, g := range s.resolved.Config.Grants {
		p = append(p, Place{Path: g.Path, Writable: g.Access&moat.WRITE != 0})
	}
	return p
}
