package refusal

import (
	"fmt"

	"github.com/moat-sandbox/moat/internal/spec"
)

// droppedRefusal names, per kind of supervisor refusal, the one refusal
// that counts those the supervisor's bounded record did not keep: its
// kind and subject.
var droppedRefusal = map[string][2]string{
	spec.RefusedUnixSocket: {"socket", "more host sockets"},
	spec.RefusedExec:       {"exec", "more execs"},
	spec.RefusedSocket:     {"socket", "more sockets"},
}

// NoteDropped records that n more refusals of the supervisor's kind were
// made than its record kept (the first 64 of each kind, and the first of
// each network socket family and type), as one refusal that counts them
// all: "socket: more sockets: N more refused, not recorded". So the
// report says refusals went unrecorded, whatever the sandbox spent the
// record on.
func (rs *List) NoteDropped(kind string, n int) {
	name, ok := droppedRefusal[kind]
	if !ok {
		name = [2]string{kind, "more " + kind}
	}
	rs.AddCount(name[0], name[1], n, func(total int) string {
		return fmt.Sprintf("%d more refused, not recorded", total)
	})
}
