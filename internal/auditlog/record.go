package auditlog

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"time"
)

// Record is one network decision as the log writes it. Its fields are
// moat.AuditRecord's, in the same order, so that moat converts one into
// the other; see there for what each means. The zero value is a denial of
// an unnamed host, stamped with the time it is written.
type Record struct {
	Time     time.Time
	Sandbox  string
	Protocol string
	Host     string
	Port     int
	IP       netip.Addr
	Allowed  bool
	Reason   string
	Repeated int64
}

// jsonLine is the JSON form of a Record; the field order is the order of the
// keys in the line.
type jsonLine struct {
	Timestamp string `json:"timestamp"`
	Sandbox   string `json:"sandbox"`
	Protocol  string `json:"protocol"`
	Host      string `json:"host"`
	Port      int    `json:"port"`
	IP        string `json:"ip,omitempty"`
	Allowed   bool   `json:"allowed"`
	Reason    string `json:"reason"`
	Repeated  int64  `json:"repeated,omitempty"`
}

// timeFormat is RFC 3339 with milliseconds.
const timeFormat = "2006-01-02T15:04:05.000Z07:00"

// Encode returns r as a JSON line ending in a newline; a zero Time is
// now().
func Encode(r Record, now func() time.Time) ([]byte, error) {
	t := r.Time
	if t.IsZero() {
		t = now()
	}
	a := jsonLine{
		Timestamp: t.UTC().Format(timeFormat),
		Sandbox:   r.Sandbox,
		Protocol:  r.Protocol,
		Host:      r.Host,
		Port:      r.Port,
		Allowed:   r.Allowed,
		Reason:    r.Reason,
		Repeated:  max(r.Repeated, 0),
	}
	if r.IP.IsValid() {
		a.IP = r.IP.String()
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(a); err != nil { // Encode ends the line with '\n'
		return nil, err
	}
	return buf.Bytes(), nil
}
