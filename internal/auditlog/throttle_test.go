package auditlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat/internal/auditlimit"
	"github.com/moat-sandbox/moat/internal/proxy"
)

// throttled is the throttle of a sandbox with disk limit disk whose
// decisions are audited to a buffer.
func throttled(t *testing.T, disk int64) (*Throttle, *bytes.Buffer) {
	t.Helper()
	var buf bytes.Buffer
	log := NewWriter(&buf, time.Now)
	return NewThrottle("0123456789ab", Budget(disk), log.WriteLine), &buf
}

// auditLines decodes buf's lines.
func auditLines(t *testing.T, buf *bytes.Buffer) []jsonLine {
	t.Helper()
	var out []jsonLine
	for _, l := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		if l == "" {
			continue
		}
		var a jsonLine
		if err := json.Unmarshal([]byte(l), &a); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		out = append(out, a)
	}
	return out
}

// TestAuditThrottleRepeats: a flood of one refusal writes its first
// auditlimit.DefaultPerKey lines and then one "repeated" line whose count
// makes up the exact total; distinct refusals each get a line (the
// control).
func TestAuditThrottleRepeats(t *testing.T) {
	for _, tc := range []struct {
		name      string
		n         int
		wantLines int
	}{
		{"at the per-key bound", auditlimit.DefaultPerKey, auditlimit.DefaultPerKey},
		{"one past", auditlimit.DefaultPerKey + 1, auditlimit.DefaultPerKey + 1},
		{"flood", 50000, auditlimit.DefaultPerKey + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, buf := throttled(t, 0)
			for range tc.n {
				if err := a.Record(Record{Time: time.Now(), Protocol: "http", Host: "Denied.Test", Port: 80, Reason: "host not in allow-list"}); err != nil {
					t.Fatal(err)
				}
			}
			for i := range 20 {
				a.Record(Record{Time: time.Now(), Protocol: "http", Host: fmt.Sprintf("d%d.test", i), Port: 80, Reason: "host not in allow-list"})
			}
			a.Close()
			lines := auditLines(t, buf)
			if len(lines) != tc.wantLines+20 {
				t.Fatalf("%d lines, want %d:\n%s", len(lines), tc.wantLines+20, buf)
			}
			var total int64
			distinct := map[string]bool{}
			for _, l := range lines {
				if l.Host == "denied.test" {
					total += max(l.Repeated, 1)
					if l.Repeated > 0 && (l.Reason != "host not in allow-list" || l.Allowed || l.Protocol != "http") {
						t.Errorf("aggregate line %+v", l)
					}
				} else {
					distinct[l.Host] = true
				}
			}
			if total != int64(tc.n) || len(distinct) != 20 {
				t.Errorf("lines account for %d refusals of denied.test and %d distinct, want %d and 20", total, len(distinct), tc.n)
			}
		})
	}
}

// TestAuditThrottleBudget: distinct refusals past the sandbox's byte budget
// truncate the log: it stays within the budget, says so in one line, and
// ends with a line counting every decision not written; an allowed
// connection to a destination never recorded is refused then, one already
// recorded is not. The budget is the disk limit when smaller.
func TestAuditThrottleBudget(t *testing.T) {
	const budget = 256 << 10
	a, buf := throttled(t, budget)
	if got := a.lim.Limits().MaxBytes; got != budget {
		t.Fatalf("budget %d, want the disk limit %d", got, budget)
	}
	if err := a.Record(Record{Time: time.Now(), Protocol: "connect", Host: "known.test", Port: 443, Allowed: true, Reason: "allowed"}); err != nil {
		t.Fatal(err)
	}
	const n = 5000 // about 700 KiB of lines
	for i := range n {
		if err := a.Record(Record{Time: time.Now(), Protocol: "http", Host: fmt.Sprintf("h%d.denied.test", i), Port: 80, Reason: "host not in allow-list"}); err != nil {
			t.Fatal(err)
		}
	}
	err := a.Record(Record{Time: time.Now(), Protocol: "connect", Host: "new.test", Port: 443, Allowed: true, Reason: "allowed"})
	if !errors.Is(err, proxy.ErrAuditFull) {
		t.Errorf("allowed, new destination after truncation: %v, want ErrAuditFull", err)
	}
	if err := a.Record(Record{Time: time.Now(), Protocol: "connect", Host: "known.test", Port: 443, Allowed: true, Reason: "allowed"}); err != nil {
		t.Errorf("allowed, recorded destination after truncation: %v", err)
	}
	a.Close()
	if buf.Len() > budget {
		t.Errorf("%d bytes written, budget %d", buf.Len(), budget)
	}
	lines := auditLines(t, buf)
	last := lines[len(lines)-1]
	written := 0
	truncLines := 0
	for _, l := range lines {
		if strings.HasSuffix(l.Host, ".denied.test") {
			written++
		}
		if strings.HasPrefix(l.Reason, "audit log truncated: this sandbox's lines reached") {
			truncLines++
		}
	}
	if truncLines != 1 {
		t.Errorf("%d truncation lines", truncLines)
	}
	wantLate := int64(n - written + 2) // the refused new destination and the known one
	if !strings.HasPrefix(last.Reason, "audit log truncated: ") || last.Repeated != wantLate {
		t.Errorf("last line %+v, want a summary of %d decisions", last, wantLate)
	}
}

// TestAuditBudget: the budget is 8 MiB, or a smaller disk limit, never
// under 64 KiB.
func TestAuditBudget(t *testing.T) {
	for _, tc := range []struct{ disk, want int64 }{
		{0, 8 << 20}, {100 << 20, 8 << 20}, {8 << 20, 8 << 20}, {(8 << 20) - 1, (8 << 20) - 1},
		{10 << 20, 8 << 20}, {1 << 20, 1 << 20}, {1, 64 << 10},
	} {
		if got := Budget(tc.disk); got != tc.want {
			t.Errorf("disk %d: budget %d, want %d", tc.disk, got, tc.want)
		}
	}
}

// TestAuditThrottleFlushes: counts are written while the sandbox runs,
// not only when it closes.
func TestAuditThrottleFlushes(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a flush")
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	log, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	a := NewThrottle("0123456789ab", Budget(0), log.WriteLine)
	for range 100 {
		a.Record(Record{Time: time.Now(), Protocol: "http", Host: "d.test", Port: 80, Reason: "no"})
	}
	time.Sleep(flushEvery + time.Second)
	got, _ := os.ReadFile(path)
	if !strings.Contains(string(got), `"repeated":95`) {
		t.Errorf("no repeated line after %v:\n%s", flushEvery, got)
	}
	a.Close()
}

// FuzzAuditLine: whatever a sandbox puts in a host or a reason, and
// whatever count, a record is one line that decodes back to its fields.
func FuzzAuditLine(f *testing.F) {
	f.Add("example.com", "host not in allow-list", int64(0), true)
	f.Add("a\nb\"}{", "\u2028\x00\xff", int64(12345), false)
	f.Fuzz(func(t *testing.T, host, reason string, repeated int64, allowed bool) {
		r := Record{Time: time.Unix(1, 0), Sandbox: "0123456789ab", Protocol: "http", Host: host, Port: 80,
			Allowed: allowed, Reason: reason, Repeated: repeated}
		line, err := Encode(r, time.Now)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Count(line, []byte("\n")) != 1 || line[len(line)-1] != '\n' {
			t.Fatalf("not one line: %q", line)
		}
		var a jsonLine
		if err := json.Unmarshal(line, &a); err != nil {
			t.Fatal(err)
		}
		if a.Allowed != allowed || a.Repeated != max(repeated, 0) {
			t.Fatalf("decoded %+v from %+v", a, r)
		}
		if !strings.ContainsRune(host, '\uFFFD') && strings.ToValidUTF8(host, "\uFFFD") == host && a.Host != host {
			t.Fatalf("host %q decoded as %q", host, a.Host)
		}
	})
}

// BenchmarkAuditDecision: one proxy decision's audit, as every request
// pays it: written one line each (the old path, moat's auditNetwork) or through
// the throttle, where alike decisions past the first few are counted.
func BenchmarkAuditDecision(b *testing.B) {
	for _, mode := range []string{"line each", "throttled"} {
		b.Run(mode, func(b *testing.B) {
			log, err := Open(filepath.Join(b.TempDir(), "audit.jsonl"))
			if err != nil {
				b.Fatal(err)
			}
			defer log.Close()
			const id = "0123456789ab"
			a := NewThrottle(id, Budget(0), log.WriteLine)
			defer a.Close()
			r := Record{Time: time.Now(), Protocol: "http", Host: "pypi.org", Port: 80, Allowed: true, Reason: `matches "pypi.org"`}
			b.ResetTimer()
			for range b.N {
				if mode == "throttled" {
					err = a.Record(r)
				} else {
					r.Sandbox = id
					err = log.Record(r)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkNewAuditThrottle: what the throttle adds to starting a
// sandbox's proxy.
func BenchmarkNewAuditThrottle(b *testing.B) {
	for range b.N {
		NewThrottle("0123456789ab", Budget(0), nil)
	}
}
