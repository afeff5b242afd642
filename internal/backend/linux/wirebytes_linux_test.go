package linux

import (
	"reflect"
	"testing"
)

// A whole message, helperSpec with its maps and nested structs, crosses the
// socket with its non-UTF-8 names intact (internal/bytestr).
func TestWireMessageKeepsBytes(t *testing.T) {
	bad := "/w/bad\xff"
	sent := helperSpec{
		WorkDir:  bad,
		ReadOnly: []string{bad + "/r", "/ok"},
		Identity: map[string]fileID{bad: {Dev: 1, Ino: 2}},
		Carve:    []carveRule{{Path: bad + "/c", Keep: 3}},
		Virtual:  []virtualFile{{Path: bad + "/v", Content: []byte{0xff, 0}}},
	}
	orig := sent
	a, b := socketPair(t)
	if err := sendMessage(a, &sent, nil); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sent, orig) {
		t.Fatal("sendMessage changed the caller's message")
	}
	var got helperSpec
	if _, err := recvMessage(b, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, sent) {
		t.Fatalf("received %+v, want %+v", got, sent)
	}
}
