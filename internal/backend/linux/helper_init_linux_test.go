package linux

import "testing"

func TestDecodeInitReply(t *testing.T) {
	cases := []struct {
		name string
		in   []byte
		want initReply
	}{
		{"nothing read", nil, initReply{}},
		{"quiet", []byte{0}, initReply{}},
		{"refusals", []byte{initReplyRefusals}, initReply{Refusals: true}},
		{"killed", append([]byte{initReplyKilled}, "resident 3 MiB"...), initReply{MemoryExceeded: true, MemoryDetail: "resident 3 MiB"}},
		{"killed and refusals", append([]byte{initReplyKilled | initReplyRefusals}, "x"...), initReply{MemoryExceeded: true, MemoryDetail: "x", Refusals: true}},
		{"detail without the kill bit is ignored", append([]byte{0}, "stray"...), initReply{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := decodeInitReply(tc.in); got != tc.want {
				t.Errorf("decodeInitReply(%q) = %+v, want %+v", tc.in, got, tc.want)
			}
		})
	}
}

func FuzzDecodeInitReply(f *testing.F) {
	f.Add([]byte{initReplyKilled, 'a'})
	f.Add([]byte{0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := decodeInitReply(b)
		if !r.MemoryExceeded && r.MemoryDetail != "" {
			t.Errorf("a detail without a kill: %+v", r)
		}
		if r.MemoryExceeded && len(r.MemoryDetail) != len(b)-1 {
			t.Errorf("detail %q from %q", r.MemoryDetail, b)
		}
	})
}
