package auditlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// readAuditLines returns the lines of the file at path, each decoded.
func readAuditLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		t.Fatalf("%s does not end in a newline", path)
	}
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("%s: line %q: %v", path, sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func TestAuditLogRecordFormat(t *testing.T) {
	at := time.Date(2025, 6, 7, 8, 9, 10, 123456789, time.FixedZone("X", -5*3600))
	clock := func() time.Time { return time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) }
	cases := []struct {
		name string
		rec  Record
		want string
	}{
		{"allowed with ip, converted to UTC milliseconds",
			Record{Time: at, Sandbox: "s1", Protocol: "connect", Host: "example.com", Port: 443, IP: netip.MustParseAddr("2001:db8::1"), Allowed: true, Reason: `matches "example.com"`},
			`{"timestamp":"2025-06-07T13:09:10.123Z","sandbox":"s1","protocol":"connect","host":"example.com","port":443,"ip":"2001:db8::1","allowed":true,"reason":"matches \"example.com\""}`},
		{"denied without ip",
			Record{Time: at, Sandbox: "s1", Protocol: "http", Host: "evil.net", Port: 80, Reason: "not on the allow list"},
			`{"timestamp":"2025-06-07T13:09:10.123Z","sandbox":"s1","protocol":"http","host":"evil.net","port":80,"allowed":false,"reason":"not on the allow list"}`},
		{"zero time is the clock's",
			Record{Host: "a.b", Port: 1},
			`{"timestamp":"2030-01-01T00:00:00.000Z","sandbox":"","protocol":"","host":"a.b","port":1,"allowed":false,"reason":""}`},
		{"no HTML escaping",
			Record{Time: at, Host: "a.b", Port: 1, Reason: "a<b&c>"},
			`{"timestamp":"2025-06-07T13:09:10.123Z","sandbox":"","protocol":"","host":"a.b","port":1,"allowed":false,"reason":"a<b&c>"}`},
		{"newlines stay inside the line",
			Record{Time: at, Host: "x\ny", Port: 1, Reason: "a\nb\r\"c\""},
			`{"timestamp":"2025-06-07T13:09:10.123Z","sandbox":"","protocol":"","host":"x\ny","port":1,"allowed":false,"reason":"a\nb\r\"c\""}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			l := NewWriter(&buf, clock)
			if err := l.Record(tc.rec); err != nil {
				t.Fatal(err)
			}
			if got := buf.String(); got != tc.want+"\n" {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestAuditLogFileAllowedAndDeniedInOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	recs := []Record{
		{Sandbox: "s", Protocol: "connect", Host: "a.example", Port: 443, IP: netip.MustParseAddr("192.0.2.1"), Allowed: true, Reason: "ok"},
		{Sandbox: "s", Protocol: "http", Host: "b.example", Port: 80, Reason: "not on the allow list"},
		{Sandbox: "s", Protocol: "socks5", Host: "c.example", Port: 22, IP: netip.MustParseAddr("10.0.0.1"), Reason: "local address refused"},
	}
	for _, r := range recs {
		if err := l.Record(r); err != nil {
			t.Fatal(err)
		}
		// Write-ahead: the line is in the file when Record returns.
		if n := len(readAuditLines(t, path)); n == 0 {
			t.Fatal("line not in the file after Record returned")
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	lines := readAuditLines(t, path)
	if len(lines) != len(recs) {
		t.Fatalf("%d lines, want %d", len(lines), len(recs))
	}
	for i, r := range recs {
		m := lines[i]
		if m["host"] != r.Host || m["allowed"] != r.Allowed || m["reason"] != r.Reason || m["protocol"] != r.Protocol || m["sandbox"] != "s" || m["port"] != json.Number(fmt.Sprint(r.Port)) {
			t.Errorf("line %d = %v, want %+v", i, m, r)
		}
		if _, has := m["ip"]; has != r.IP.IsValid() {
			t.Errorf("line %d: ip present = %v", i, has)
		}
		ts, _ := m["timestamp"].(string)
		if _, err := time.Parse(time.RFC3339, ts); err != nil || !strings.HasSuffix(ts, "Z") || len(ts) != len("2006-01-02T15:04:05.000Z") {
			t.Errorf("line %d: timestamp %q", i, ts)
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestAuditLogReopenAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := os.WriteFile(path, []byte(`{"earlier":true}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		l, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Record(Record{Host: fmt.Sprintf("h%d.example", i), Port: 443}); err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	lines := readAuditLines(t, path)
	if len(lines) != 4 || lines[0]["earlier"] != true {
		t.Fatalf("lines = %v", lines)
	}
	for i := range 3 {
		if lines[i+1]["host"] != fmt.Sprintf("h%d.example", i) {
			t.Errorf("line %d = %v", i+1, lines[i+1])
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o644 {
		t.Errorf("reopening changed the mode to %v", fi.Mode().Perm())
	}
}

func TestAuditLogOpenErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	cases := []struct {
		name string
		open func() (*Log, error)
		want string
	}{
		{"missing parent", func() (*Log, error) { return Open(filepath.Join(missing, "audit.jsonl")) }, "does not exist"},
		{"missing grandparent", func() (*Log, error) { return Open(filepath.Join(missing, "a", "audit.jsonl")) }, "does not exist"},
		{"parent is a file", func() (*Log, error) { return Open(filepath.Join(file, "audit.jsonl")) }, "not a directory"},
		{"path is a directory", func() (*Log, error) { return Open(dir) }, "audit log"},
		{"empty path", func() (*Log, error) { return Open("") }, "empty path"},
		{"daily missing dir", func() (*Log, error) { return OpenDaily(missing, 3, time.Now) }, "does not exist"},
		{"daily dir is a file", func() (*Log, error) { return OpenDaily(file, 3, time.Now) }, "not a directory"},
		{"daily empty dir", func() (*Log, error) { return OpenDaily("", 3, time.Now) }, "empty path"},
		{"daily negative max", func() (*Log, error) { return OpenDaily(dir, -1, time.Now) }, "max files -1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l, err := tc.open()
			if err == nil {
				l.Close()
				t.Fatal("no error")
			}
			if !strings.HasPrefix(err.Error(), "audit log") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
		})
	}
	if _, err := os.Lstat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the missing directory was created: %v", err)
	}
}

// failWriter fails every write with err, or writes short.
type failWriter struct {
	err   error
	short bool
}

func (w failWriter) Write(p []byte) (int, error) {
	if w.short {
		return len(p) / 2, nil
	}
	return 0, w.err
}

func TestAuditLogWriteFailure(t *testing.T) {
	closedFile, err := os.Create(filepath.Join(t.TempDir(), "closed"))
	if err != nil {
		t.Fatal(err)
	}
	closedFile.Close()
	closedLog := NewWriter(&bytes.Buffer{}, time.Now)
	closedLog.Close()
	closedFileLog, err := Open(filepath.Join(t.TempDir(), "a.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	closedFileLog.Close()
	closedDaily, err := OpenDaily(t.TempDir(), 0, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	closedDaily.Close()

	cases := []struct {
		name string
		log  *Log
		want string
	}{
		{"closed fd", NewWriter(closedFile, time.Now), "write"},
		{"disk full", NewWriter(failWriter{err: syscall.ENOSPC}, time.Now), "write"},
		{"short write", NewWriter(failWriter{short: true}, time.Now), "short write"},
		{"closed log", closedLog, "closed"},
		{"closed file log", closedFileLog, "closed"},
		{"closed daily log", closedDaily, "closed"},
		{"zero log", &Log{}, "not opened"},
		{"nil log", nil, "not opened"},
	}
	if _, err := os.Stat("/dev/full"); err == nil {
		full, err := Open("/dev/full")
		if err != nil {
			t.Fatal(err)
		}
		defer full.Close()
		cases = append(cases, struct {
			name string
			log  *Log
			want string
		}{"dev full", full, "no space left"})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.log.Record(Record{Host: "example.com", Port: 443, Allowed: true})
			if err == nil {
				t.Fatal("Record returned nil")
			}
			if !strings.HasPrefix(err.Error(), "audit log") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
		})
	}
}

func TestAuditLogCloseTwice(t *testing.T) {
	l, err := Open(filepath.Join(t.TempDir(), "a.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	var nilLog *Log
	if err := nilLog.Close(); err != nil {
		t.Errorf("nil Close: %v", err)
	}
}

// fakeClock is a settable clock for rotation tests.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }
func dailyName(date string) string   { return filePrefix + date + fileSuffix }
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

func TestAuditLogDailyRotation(t *testing.T) {
	dir := t.TempDir()
	// Files that are not the log's own, and must survive pruning.
	foreign := []string{
		"notes.txt",
		"network-audit.jsonl",
		"network-audit.2020-13-01.jsonl", // not a date
		"network-audit.2020-01-01.jsonl.gz",
		"network-audit.2020-1-01.jsonl",
		"other.2020-01-01.jsonl",
	}
	for _, n := range foreign {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("keep\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A directory with the log's name pattern is not a file to delete.
	if err := os.Mkdir(filepath.Join(dir, dailyName("2019-01-01")), 0o700); err != nil {
		t.Fatal(err)
	}
	// Two old files of the log's own.
	for _, d := range []string{"2024-12-30", "2024-12-31"} {
		if err := os.WriteFile(filepath.Join(dir, dailyName(d)), []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	clock := &fakeClock{t: time.Date(2025, 1, 1, 23, 59, 59, 999e6, time.UTC)}
	l, err := OpenDaily(dir, 3, clock.now)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	record := func(host string) {
		t.Helper()
		if err := l.Record(Record{Host: host, Port: 443}); err != nil {
			t.Fatal(err)
		}
	}
	own := func() []string {
		var out []string
		for _, n := range listDir(t, dir) {
			if fi, err := os.Stat(filepath.Join(dir, n)); err == nil && fi.Mode().IsRegular() && isDailyName(n) {
				out = append(out, n)
			}
		}
		return out
	}

	// Opening prunes to three files, today's included: nothing yet.
	if got, want := own(), []string{dailyName("2024-12-30"), dailyName("2024-12-31"), dailyName("2025-01-01")}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after open: %q, want %q", got, want)
	}
	record("a.example")
	record("b.example")

	// The date changes at midnight UTC: a new file, and the oldest goes.
	clock.set(time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC))
	record("c.example")
	if got, want := own(), []string{dailyName("2024-12-31"), dailyName("2025-01-01"), dailyName("2025-01-02")}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after the first change: %q, want %q", got, want)
	}

	// A clock in another zone still names files by the UTC date:
	// 2025-01-02 20:00 at UTC-5 is 2025-01-03 01:00 UTC.
	clock.set(time.Date(2025, 1, 2, 20, 0, 0, 0, time.FixedZone("X", -5*3600)))
	record("d.example")
	record("e.example")
	if got, want := own(), []string{dailyName("2025-01-01"), dailyName("2025-01-02"), dailyName("2025-01-03")}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after the second change: %q, want %q", got, want)
	}

	wantHosts := map[string][]string{
		"2025-01-01": {"a.example", "b.example"},
		"2025-01-02": {"c.example"},
		"2025-01-03": {"d.example", "e.example"},
	}
	for date, hosts := range wantHosts {
		lines := readAuditLines(t, filepath.Join(dir, dailyName(date)))
		var got []string
		for _, m := range lines {
			got = append(got, m["host"].(string))
			if ts := m["timestamp"].(string); !strings.HasPrefix(ts, date+"T") {
				t.Errorf("%s: timestamp %s", date, ts)
			}
		}
		if !reflect.DeepEqual(got, hosts) {
			t.Errorf("%s: hosts %q, want %q", date, got, hosts)
		}
	}
	for _, n := range append(foreign, dailyName("2019-01-01")) {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("foreign %s: %v", n, err)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, dailyName("2025-01-03"))); err != nil || runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("new file: %v, %v", fi.Mode(), err)
	}
}

func TestAuditLogDailyReopenAppendsAndKeepsAll(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{t: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
	for i := range 2 {
		l, err := OpenDaily(dir, 0, clock.now)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Record(Record{Host: fmt.Sprintf("h%d.example", i), Port: 1}); err != nil {
			t.Fatal(err)
		}
		l.Close()
	}
	if n := len(readAuditLines(t, filepath.Join(dir, dailyName("2025-03-01")))); n != 2 {
		t.Fatalf("%d lines after reopening, want 2", n)
	}

	// maxFiles 0 keeps every file.
	l, err := OpenDaily(dir, 0, clock.now)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for d := 2; d <= 6; d++ {
		clock.set(time.Date(2025, 3, d, 0, 0, 0, 0, time.UTC))
		if err := l.Record(Record{Host: "x.example", Port: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(listDir(t, dir)); n != 6 {
		t.Errorf("%d files with maxFiles 0, want 6: %q", n, listDir(t, dir))
	}
}

func TestAuditLogDailyMaxOne(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{t: time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)}
	// A file dated in the future (a clock that was wrong) is pruned before
	// the open one, which is never deleted.
	future := dailyName("2099-01-01")
	if err := os.WriteFile(filepath.Join(dir, future), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := OpenDaily(dir, 1, clock.now)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for d := 1; d <= 3; d++ {
		clock.set(time.Date(2025, 3, d, 0, 0, 0, 0, time.UTC))
		if err := l.Record(Record{Host: "x.example", Port: 1}); err != nil {
			t.Fatal(err)
		}
		if got, want := listDir(t, dir), []string{dailyName(fmt.Sprintf("2025-03-%02d", d))}; !reflect.DeepEqual(got, want) {
			t.Fatalf("day %d: %q, want %q", d, got, want)
		}
	}
}

func TestAuditLogDailyDirRemoved(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "logs")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)}
	l, err := OpenDaily(dir, 2, clock.now)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	clock.set(clock.now().Add(24 * time.Hour))
	if err := l.Record(Record{Host: "x.example", Port: 1}); err == nil {
		t.Fatal("Record into a removed directory returned nil")
	}
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the directory was recreated: %v", err)
	}
}

func TestAuditLogConcurrentWriters(t *testing.T) {
	const writers, each = 200, 50
	cases := []struct {
		name string
		open func(t *testing.T) (*Log, func() string)
	}{
		{"file", func(t *testing.T) (*Log, func() string) {
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			l, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			return l, func() string { return path }
		}},
		{"daily", func(t *testing.T) (*Log, func() string) {
			dir := t.TempDir()
			day := time.Date(2025, 5, 6, 7, 8, 9, 0, time.UTC)
			l, err := OpenDaily(dir, 2, func() time.Time { return day })
			if err != nil {
				t.Fatal(err)
			}
			return l, func() string { return filepath.Join(dir, dailyName("2025-05-06")) }
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l, path := tc.open(t)
			var wg sync.WaitGroup
			errs := make(chan error, writers)
			// A long reason makes a torn or interleaved write visible.
			pad := strings.Repeat("x", 2000)
			for g := range writers {
				wg.Go(func() {
					for i := range each {
						err := l.Record(Record{Sandbox: fmt.Sprint(g), Host: "example.com", Port: i + 1, Allowed: i%2 == 0, Reason: pad})
						if err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			lines := readAuditLines(t, path())
			if len(lines) != writers*each {
				t.Fatalf("%d lines, want %d", len(lines), writers*each)
			}
			next := make(map[string]int) // per writer, the next port expected
			for _, m := range lines {
				g := m["sandbox"].(string)
				want := next[g] + 1
				if m["port"] != json.Number(fmt.Sprint(want)) || m["reason"] != pad {
					t.Fatalf("writer %s: line %v, want port %d", g, m["port"], want)
				}
				next[g] = want
			}
			if len(next) != writers {
				t.Fatalf("%d writers seen, want %d", len(next), writers)
			}
		})
	}
}
