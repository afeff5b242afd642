//go:build linux

package escape_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/session"
)

// filesBox is a sandbox with a session's file API (internal/session's
// Files: a file server inside the sandbox), this test binary serving.
type filesBox struct {
	sb    *moat.Sandbox
	files *session.Files
	work  string
}

// newFilesBox makes a sandbox of cfg (its working directory a fresh one
// under base when cfg names none) and starts its file API over places,
// the working directory alone when places is nil.
func newFilesBox(t *testing.T, cfg moat.Config, places func(work string) []session.Place) filesBox {
	t.Helper()
	if cfg.WorkDir == "" {
		cfg.WorkDir = filepath.Join(t.TempDir(), "work")
		writeFile(t, filepath.Join(cfg.WorkDir, ".keep"), "")
	}
	if err := session.GrantSelf(&cfg); err != nil {
		t.Fatalf("GrantSelf: %v", err)
	}
	sb := newSandbox(t, cfg)
	pl := []session.Place{{Path: sb.WorkDir(), Writable: true}}
	if places != nil {
		pl = places(sb.WorkDir())
	}
	f, err := session.StartFiles(sb, pl, session.FileLimits{})
	if err != nil {
		t.Fatalf("StartFiles: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	return filesBox{sb: sb, files: f, work: sb.WorkDir()}
}

// apiCode is the session error code of err, "" for nil.
func apiCode(err error) string {
	var e *session.Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return e.Code
	}
	return "not a session error: " + err.Error()
}
