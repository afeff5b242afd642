package session

import (
	"runtime/debug"
	"sync"
	"time"

	"github.com/moat-sandbox/moat/internal/report/jsonv1"
)

// Close stops every background process, closes the sandbox (which kills
// what still runs) and returns the session's report. A second Close
// returns the same report.
func (s *Session) Close() (jsonv1.Document, error) {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		s.m.forget(s)
		err := s.shut()
		d := s.document()
		if err != nil {
			d.Outcome.Error = err.Error()
			d.Outcome.ErrorKind = "failure"
			s.closeErr = internalError("close", err)
		}
		s.final = d
		s.m.logf("session %s: closed", s.id)
	})
	if s.closeErr != nil {
		return s.final, s.closeErr
	}
	return s.final, nil
}

// shut stops the processes and closes the file API, the sandbox and its
// audit log.
func (s *Session) shut() error {
	s.mu.Lock()
	s.closed = true
	ps := make([]*proc, 0, len(s.procs))
	for _, p := range s.procs {
		ps = append(ps, p)
	}
	files := s.files
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range ps {
		wg.Add(1)
		go func() { defer wg.Done(); p.stop() }()
	}
	wg.Wait()
	s.releaseOutput()
	var err error
	if files != nil {
		err = files.Close()
	}
	if cerr := s.sb.Close(); err == nil {
		err = cerr
	}
	if cerr := s.resolved.Close(); err == nil {
		err = cerr
	}
	return err
}

// Report is the session's report so far, in report-json v1's shape
// (command "session"); after Close, the final one.
func (s *Session) Report() jsonv1.Document {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		s.closeOnce.Do(func() {}) // wait for a Close in progress
		return s.final
	}
	_ = s.touch()
	return s.document()
}

// Refusals is what the sandbox was refused so far, oldest first; never
// nil.
func (s *Session) Refusals() []jsonv1.Refusal {
	_ = s.touch()
	return jsonv1.FromRefusals(s.sb.Refusals())
}

// document is the report now.
func (s *Session) document() jsonv1.Document {
	d := jsonv1.New(moduleVersion(), "session")
	d.WorkDir = s.sb.WorkDir()
	d.Started = true
	d.Outcome.StartedAt = stamp(s.created)
	d.Outcome.DurationMS = time.Since(s.created).Milliseconds()
	d.Refusals = jsonv1.FromRefusals(s.sb.Refusals())
	d.Report = jsonv1.FromReport(s.sb.Report())
	return d
}

// moduleVersion is moat's module version, "devel" for a source build.
func moduleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}
