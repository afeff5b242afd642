package moattest

import (
	"encoding/json"
	"net/netip"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// AuditEntry is one line of a network audit log (moat.OpenAuditLog). Every
// key of the line must be one of these: ReadAudit refuses unknown keys.
type AuditEntry struct {
	Timestamp string `json:"timestamp"`
	Sandbox   string `json:"sandbox"`
	Protocol  string `json:"protocol"`
	Host      string `json:"host"`
	Port      int    `json:"port"`
	IP        string `json:"ip,omitempty"`
	Allowed   bool   `json:"allowed"`
	Reason    string `json:"reason"`
	Repeated  int64  `json:"repeated,omitempty"`

	// Raw is the line as written, without its newline.
	Raw string `json:"-"`
}

var sandboxID = regexp.MustCompile(`^[0-9a-f]{12}$`)

// ReadAudit decodes every line of the audit log at path, failing the test
// on a torn last line, an empty line, or a line that is not exactly one
// JSON object with the documented keys, an RFC 3339 timestamp, a sandbox
// id and, when present, a valid IP address.
func ReadAudit(t testing.TB, path string) []AuditEntry {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	if len(b) == 0 {
		return nil
	}
	if b[len(b)-1] != '\n' {
		t.Fatalf("audit log does not end with a newline (a torn line?):\n%s", b)
	}
	var out []AuditEntry
	for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if line == "" {
			t.Fatalf("audit line %d is empty:\n%s", i+1, b)
		}
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		var e AuditEntry
		if err := dec.Decode(&e); err != nil {
			t.Fatalf("audit line %d is not a valid record: %v\n%s", i+1, err, line)
		}
		if dec.More() {
			t.Fatalf("audit line %d holds more than one object:\n%s", i+1, line)
		}
		if _, err := time.Parse(time.RFC3339, e.Timestamp); err != nil {
			t.Fatalf("audit line %d: timestamp %q: %v", i+1, e.Timestamp, err)
		}
		if !sandboxID.MatchString(e.Sandbox) {
			t.Fatalf("audit line %d: sandbox %q is not a sandbox id", i+1, e.Sandbox)
		}
		if e.IP != "" {
			if _, err := netip.ParseAddr(e.IP); err != nil {
				t.Fatalf("audit line %d: ip %q: %v", i+1, e.IP, err)
			}
		}
		e.Raw = line
		out = append(out, e)
	}
	return out
}
