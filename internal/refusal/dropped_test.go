package refusal

import (
	"testing"

	"github.com/moat-sandbox/moat/internal/spec"
)

// TestDroppedRefusalsCounted: the counts a supervisor reports, drain by
// drain, become one refusal per kind that says the total, in the place
// of the first, after what was recorded before it.
func TestDroppedRefusalsCounted(t *testing.T) {
	var s List
	s.Add(Refusal{Kind: "socket", Subject: "udp socket (AF_INET, SOCK_DGRAM)"})
	for _, d := range []struct {
		kind string
		n    int
	}{{spec.RefusedSocket, 3}, {spec.RefusedExec, 1}, {spec.RefusedSocket, 4}} {
		s.NoteDropped(d.kind, d.n)
	}
	want := []string{
		"socket: udp socket (AF_INET, SOCK_DGRAM)",
		"socket: more sockets: 7 more refused, not recorded",
		"exec: more execs: 1 more refused, not recorded",
	}
	got := s.Snapshot()
	if len(got) != len(want) {
		t.Fatalf("refusals %v, want %q", got, want)
	}
	for i := range want {
		if got[i].String() != want[i] {
			t.Errorf("refusal %d: %q, want %q", i, got[i].String(), want[i])
		}
	}
}
