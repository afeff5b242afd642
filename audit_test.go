package moat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestNetworkAuditLogPublicFace: the root's log is internal/auditlog's
// behind it (tested there): each way to open one records a line, the
// zero value and nil refuse to record, and closing twice is fine.
func TestNetworkAuditLogPublicFace(t *testing.T) {
	dir := t.TempDir()
	day := time.Now().UTC().Format("2006-01-02")
	for _, tc := range []struct {
		name string
		open func() (*NetworkAuditLog, error)
		file string // where the line lands; "" when Record must fail
	}{
		{"file", func() (*NetworkAuditLog, error) { return OpenAuditLog(filepath.Join(dir, "a.jsonl")) }, filepath.Join(dir, "a.jsonl")},
		{"daily", func() (*NetworkAuditLog, error) { return OpenDailyAuditLog(dir, 0) }, filepath.Join(dir, "network-audit."+day+".jsonl")},
		{"zero", func() (*NetworkAuditLog, error) { return &NetworkAuditLog{}, nil }, ""},
		{"nil", func() (*NetworkAuditLog, error) { return nil, nil }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := tc.open()
			if err != nil {
				t.Fatal(err)
			}
			err = l.Record(AuditRecord{Sandbox: "s", Host: "example.com", Port: 443, Reason: "no"})
			if (err == nil) != (tc.file != "") {
				t.Fatalf("Record = %v", err)
			}
			if tc.file != "" {
				b, _ := os.ReadFile(tc.file)
				if !strings.Contains(string(b), `"host":"example.com"`) {
					t.Errorf("%s: %q", tc.file, b)
				}
				if got := auditLogTarget(&Config{Network: Audited(AllowAll(), l)}); got == "" {
					t.Errorf("no audit log target")
				}
			}
			if err := l.Close(); err != nil {
				t.Errorf("Close = %v", err)
			}
			if err := l.Close(); err != nil {
				t.Errorf("second Close = %v", err)
			}
		})
	}
}
