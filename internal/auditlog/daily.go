package auditlog

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Daily audit files are named filePrefix + YYYY-MM-DD + fileSuffix.
const (
	filePrefix = "network-audit."
	fileSuffix = ".jsonl"
	dateFormat = "2006-01-02"
)

// OpenDaily opens a log that writes to one file a day in dir, named
// network-audit.YYYY-MM-DD.jsonl after the UTC date of now(), switching
// files when the date changes, and keeps at most maxFiles such files (0
// keeps all); see moat.OpenDailyAuditLog.
func OpenDaily(dir string, maxFiles int, now func() time.Time) (*Log, error) {
	if dir == "" {
		return nil, fmt.Errorf("audit log directory %q: empty path", dir)
	}
	if maxFiles < 0 {
		return nil, fmt.Errorf("audit log directory %q: max files %d: want 0 (keep all) or more", dir, maxFiles)
	}
	if err := checkDir(dir, dir); err != nil {
		return nil, err
	}
	l := &Log{name: dir, now: now, dir: dir, maxFiles: maxFiles}
	if err := l.rotate(now()); err != nil {
		return nil, err
	}
	return l, nil
}

// rotate makes sure the file for the UTC date of now is open, and prunes old
// files when it opens one. It is called with l.mu held.
func (l *Log) rotate(now time.Time) error {
	day := now.UTC().Format(dateFormat)
	if day == l.day && l.w != nil {
		return nil
	}
	path := filepath.Join(l.dir, filePrefix+day+fileSuffix)
	f, err := openFile(path)
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
func (l *Log) prune() {
	if l.maxFiles == 0 {
		return
	}
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return
	}
	current := filePrefix + l.day + fileSuffix
	var old []string
	for _, e := range entries {
		if n := e.Name(); n != current && e.Type().IsRegular() && isDailyName(n) {
			old = append(old, n)
		}
	}
	sort.Strings(old) // the date format sorts chronologically
	for i := 0; i < len(old)+1-l.maxFiles; i++ {
		_ = os.Remove(filepath.Join(l.dir, old[i]))
	}
}

// isDailyName reports whether name is network-audit.YYYY-MM-DD.jsonl with
// a real date.
func isDailyName(name string) bool {
	date, ok := strings.CutPrefix(name, filePrefix)
	if !ok {
		return false
	}
	date, ok = strings.CutSuffix(date, fileSuffix)
	if !ok || len(date) != len(dateFormat) {
		return false
	}
	t, err := time.Parse(dateFormat, date)
	return err == nil && t.Format(dateFormat) == date
}
