package serve

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
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
		`{"POLICY":"default"}`, `{"Narrow":{"NETWORK":"deny"},"narrow":{}}`, `{"narrow":{"network":"deny","network":"deny"}}`,
		`{"argv":["a"],"env":{"A":"1","A":"2"}}`, `{"argv":["a"],"argv":["b"]}`, `{"path":"f","content":{"TEXT":"a"}}`,
		`{"policy":"a","\u0070olicy":"b"}`, `{"narrow":{"grants":{"/a":"r","/a":"none"}}}`, `{"argv":["a"],"stdin":{"text":"a","text":"b"}}`,
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
			// What is accepted is refused with a key given twice, or a
			// field's key in another case.
			var top map[string]json.RawMessage
			if json.Unmarshal(body, &top) != nil || len(top) == 0 {
				return
			}
			keys := make([]string, 0, len(top))
			for k := range top {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			k := keys[0]
			kq, _ := json.Marshal(k)
			dup := append(append([]byte("{"), kq...), ':')
			dup = append(append(dup, top[k]...), ',')
			dup = append(dup, bytes.TrimLeft(body, " \t\r\n")[1:]...)
			if err := decodeJSON(dup, mk()); err == nil {
				t.Fatalf("%T: %s with %q given twice is accepted", v, dup, k)
			}
			if up := strings.ToUpper(k); up != k {
				uq, _ := json.Marshal(up)
				moved := append(append([]byte("{"), uq...), ':')
				moved = append(append(moved, top[k]...), '}')
				if err := decodeJSON(moved, mk()); err == nil {
					t.Fatalf("%T: %s (the key %q in upper case) is accepted", v, moved, k)
				}
			}
		}
	})
}

// TestStrictKeys: encoding/json's quiet leniencies are refused, naming the
// key: a key in another case, a key given twice (the last would win), at
// any depth and in maps; the controls with exact, single keys pass.
func TestStrictKeys(t *testing.T) {
	for _, tc := range []struct {
		name string
		mk   func() any
		body string
		want string // in the message; "" for accepted
	}{
		{"upper-case key", func() any { return new(session.CreateRequest) }, `{"POLICY":"default"}`, `"POLICY"; keys are case-sensitive: write "policy"`},
		{"capitalized key", func() any { return new(session.CreateRequest) }, `{"Narrow":{}}`, `"Narrow"`},
		{"nested case", func() any { return new(session.CreateRequest) }, `{"narrow":{"NETWORK":"deny"}}`, `"narrow.NETWORK"`},
		{"the review's case", func() any { return new(session.CreateRequest) }, `{"Narrow":{"NETWORK":"deny"},"narrow":{}}`, `"Narrow"`},
		{"duplicate top key", func() any { return new(session.CreateRequest) }, `{"narrow":{"network":"deny"},"narrow":{}}`, `"narrow" is given twice`},
		{"duplicate by escape", func() any { return new(session.CreateRequest) }, `{"policy":"a","\u0070olicy":"b"}`, `"policy" is given twice`},
		{"duplicate nested", func() any { return new(session.CreateRequest) }, `{"narrow":{"limits":{"processes":1,"processes":2}}}`, `"narrow.limits.processes" is given twice`},
		{"duplicate map key", func() any { return new(session.CreateRequest) }, `{"narrow":{"grants":{"/a":"r","/a":"none"}}}`, `"narrow.grants./a" is given twice`},
		{"duplicate env", func() any { return new(runBody) }, `{"argv":["a"],"env":{"A":"1","A":"2"}}`, `"env.A" is given twice`},
		{"bytes case", func() any { return new(fileWrite) }, `{"path":"f","content":{"Text":"a"}}`, `"content.Text"`},
		{"bytes duplicate", func() any { return new(runBody) }, `{"argv":["a"],"stdin":{"text":"a","text":"b"}}`, `"stdin.text" is given twice`},
		{"too deep", func() any { return new(runBody) }, `{"argv":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`, "deeper"},
		{"control: exact keys", func() any { return new(session.CreateRequest) }, `{"policy":"p","narrow":{"network":"deny","grants":{"/a":"r","/A":"none"},"limits":{"processes":1}}}`, ""},
		{"control: env keys of any case", func() any { return new(runBody) }, `{"argv":["a"],"env":{"A":"1","a":"2"},"stdin":{"text":"x"}}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := decodeJSON([]byte(tc.body), tc.mk())
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && err == nil:
				t.Errorf("accepted")
			case tc.want != "" && (apiError(err).Code != session.CodeBadRequest || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want bad_request naming %s", err, tc.want)
			}
		})
	}
}
