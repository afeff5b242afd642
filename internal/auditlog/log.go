package auditlog

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Log records network decisions as JSON Lines, one object per decision,
// in one file ([Open]), one file a day ([OpenDaily]) or a writer
// ([NewWriter]). Its methods are safe for concurrent use. The zero value,
// and a nil *Log, is not usable: [Log.Record] on it returns an error.
type Log struct {
	mu     sync.Mutex
	w      io.Writer // the current destination; nil when unusable
	c      io.Closer // closes w; nil when w is not ours to close
	name   string    // the file or directory, for messages
	now    func() time.Time
	closed bool

	// Daily rotation; dir is empty for a single file.
	dir      string
	maxFiles int
	day      string // date of the open file, dateFormat
}

// writerName is the name of a log that writes to a writer.
const writerName = "writer"

// Open opens the file at path for appending audit lines, creating it with
// mode 0600 if it does not exist. It never truncates the file, so
// reopening it continues it. The directory that holds it must exist; it is
// not created.
func Open(path string) (*Log, error) {
	if path == "" {
		return nil, fmt.Errorf("audit log %q: empty path", path)
	}
	if err := checkDir(path, filepath.Dir(path)); err != nil {
		return nil, err
	}
	f, err := openFile(path)
	if err != nil {
		return nil, err
	}
	return &Log{w: f, c: f, name: path, now: time.Now}, nil
}

// NewWriter returns a log that writes to w and does not close it; now
// stamps a record whose Time is zero.
func NewWriter(w io.Writer, now func() time.Time) *Log {
	return &Log{w: w, name: writerName, now: now}
}

// checkDir checks that dir, where the log name will live, is an existing
// directory.
func checkDir(name, dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return fmt.Errorf("audit log %q: directory %q does not exist", name, dir)
		}
		return fmt.Errorf("audit log %q: %w", name, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("audit log %q: %q is not a directory", name, dir)
	}
	return nil
}

func openFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit log %q: %w", path, err)
	}
	return f, nil
}

// Record writes r as one line and returns once the line has been handed to
// the operating system in a single write (see moat.NetworkAuditLog.Record).
// An error means the line was not written.
func (l *Log) Record(r Record) error {
	if l == nil || l.now == nil {
		return errors.New("audit log: not opened")
	}
	line, err := Encode(r, l.now)
	if err != nil {
		return fmt.Errorf("audit log %q: %w", l.name, err)
	}
	return l.WriteLine(line)
}

// WriteLine writes line, one encoded record, as Record does.
func (l *Log) WriteLine(line []byte) error {
	if l == nil || l.now == nil {
		return errors.New("audit log: not opened")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return fmt.Errorf("audit log %q: closed", l.name)
	}
	if l.dir != "" {
		if err := l.rotate(l.now()); err != nil {
			return err
		}
	}
	if l.w == nil {
		return fmt.Errorf("audit log %q: no open file", l.name)
	}
	n, err := l.w.Write(line)
	if err == nil && n != len(line) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return fmt.Errorf("audit log %q: write: %w", l.name, err)
	}
	return nil
}

// Close closes the log's file. Later calls to Record return an error; later
// calls to Close return nil.
func (l *Log) Close() error {
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
			err = fmt.Errorf("audit log %q: close: %w", l.name, cerr)
		}
	}
	l.w, l.c = nil, nil
	return err
}

// Target returns the file or directory the log writes to: "" for a nil or
// unopened log and for one that writes to a writer.
func (l *Log) Target() string {
	if l == nil || l.now == nil || l.name == writerName {
		return ""
	}
	if l.dir != "" {
		return l.dir
	}
	return l.name
}
