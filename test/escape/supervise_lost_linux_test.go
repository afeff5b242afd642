//go:build linux

package escape_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

// floodSockets is a Python program that is refused many harmless socket
// families and types first (spending the supervisor's record of 64), then,
// when its argument says so, opens a UDP socket: the refusal that matters.
const floodSockets = `
import socket, sys
for f in range(3, 46):
    if f in (socket.AF_INET6, socket.AF_PACKET):
        continue
    for t in (1, 2, 3, 5):
        try: socket.socket(f, t).close()
        except OSError: pass
if sys.argv[1] == "udp":
    try:
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        print("UDP-OPENED")
    except OSError:
        print("UDP-REFUSED")
`

// TestSocketRefusalNotHiddenByFlood attacks the supervisor's bounded
// record: a sandbox spends it on harmless refusals, then tries UDP. The
// UDP refusal must still be recorded, and the refusals past the record
// counted, in Refusals() and in the summary. The control: the flood
// alone records no UDP refusal, so the probe is what puts it there.
func TestSocketRefusalNotHiddenByFlood(t *testing.T) {
	needSupervisor(t)
	need(t, "python3")
	const udp = "udp socket (AF_INET, SOCK_DGRAM)"
	for _, tc := range []struct {
		name    string
		arg     string
		wantUDP bool
	}{
		{"flood, then UDP", "udp", true},
		{"flood alone (control)", "none", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			sb := newSandbox(t, moat.Config{WorkDir: dir})
			r := inSandbox(t, sb, "python3", "-c", floodSockets, tc.arg)
			if tc.wantUDP {
				mustContain(t, r, "UDP-REFUSED")
			}
			var gotUDP bool
			var more []moat.Refusal
			for _, ref := range sb.Refusals() {
				gotUDP = gotUDP || ref.Kind == "socket" && ref.Subject == udp
				if ref.Subject == "more sockets" {
					more = append(more, ref)
				}
			}
			if gotUDP != tc.wantUDP {
				t.Errorf("UDP refusal recorded = %v, want %v: %v", gotUDP, tc.wantUDP, sb.Refusals())
			}
			if len(more) != 1 || !strings.HasSuffix(more[0].Detail, " more refused, not recorded") || more[0].Kind != "socket" {
				t.Errorf("want one socket refusal counting the unrecorded ones, got %v", more)
			}
		})
	}
	// The JSON report lists the UDP socket, and the summary, past its
	// ten lines, still says refusals went unrecorded.
	dir := t.TempDir()
	report := filepath.Join(t.TempDir(), "r.json")
	r := moatCLI(t, dir, nil, "run", "--workdir", dir, "--report-json", report, "--", "python3", "-c", floodSockets, "udp")
	mustContain(t, r, "UDP-REFUSED")
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"` + udp + `"`, `"more sockets"`, ` more refused, not recorded"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the JSON report lacks %s:\n%s", want, b)
		}
	}
	if !strings.Contains(r.Stderr, "moat: socket: more sockets: ") || !strings.Contains(r.Stderr, "moat: ... and ") {
		t.Errorf("the summary does not say refusals went unrecorded:\n%s", r.Stderr)
	}
}
