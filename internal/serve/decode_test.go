package serve

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/moat-sandbox/moat/internal/session"
)

func TestBytesRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		in   []byte
		wire string
	}{
		{nil, `{"text":""}`},
		{[]byte("héllo\n"), `{"text":"héllo\n"}`},
		{[]byte{0xff, 0x00}, `{"base64":"/wA="}`},
	} {
		got, err := json.Marshal(Bytes(tc.in))
		if err != nil || string(got) != tc.wire {
			t.Errorf("Marshal(%q) = %s, %v; want %s", tc.in, got, err, tc.wire)
		}
		var back Bytes
		if err := json.Unmarshal(got, &back); err != nil || !bytes.Equal(back, tc.in) {
			t.Errorf("Unmarshal(%s) = %q, %v", got, back, err)
		}
	}
	for _, bad := range []string{`{}`, `{"text":"a","base64":"YQ=="}`, `{"base64":"*"}`, `{"text":1}`, `"a"`, `{"text":"a","x":1}`} {
		var b Bytes
		if err := json.Unmarshal([]byte(bad), &b); err == nil {
			t.Errorf("Unmarshal(%s) passed", bad)
		}
	}
}

// FuzzDecodeRequests: the strict decoder of every request body never
// panics, and what it accepts re-encodes to a body it accepts again with
// the same meaning (nothing unknown slipped through).
func FuzzDecodeRequests(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"policy":"default","narrow":{"limits":{"memory_bytes":1}}}`,
		`{"argv":["sh","-c","x"],"stdin":{"base64":"/wA="},"timeout_ms":5,"stream":true}`,
		`{"path":"a","content":{"text":"x"},"mode":"0644"}`, `{"signal":"TERM"}`,
		`{"argv":["a"]} {}`, `{"argv":["a"],"x":1}`, `[`, `{"content":{"text":"a","base64":""}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		targets := []func() any{
			func() any { return new(session.CreateRequest) },
			func() any { return new(runBody) },
			func() any { return new(session.StartRequest) },
			func() any { return new(fileWrite) },
			func() any { return new(signalBody) },
		}
		for _, mk := range targets {
			v := mk()
			err := decodeJSON(body, v)
			if err != nil {
				if se := apiError(err); se.Code != session.CodeBadRequest {
					t.Fatalf("decode error with code %q: %v", se.Code, err)
				}
				continue
			}
			again, err := json.Marshal(v)
			if err != nil {
				t.Fatalf("re-encoding %T: %v", v, err)
			}
			w := mk()
			if err := decodeJSON(again, w); err != nil {
				t.Fatalf("%T re-encoded as %s is refused: %v", v, again, err)
			}
			third, _ := json.Marshal(w)
			if !bytes.Equal(again, third) {
				t.Fatalf("%T changed meaning: %s then %s", v, again, third)
			}
		}
	})
}
