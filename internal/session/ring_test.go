package session

import (
	"bytes"
	"testing"
)

func TestRing(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cap     int
		writes  []string
		from    int64
		data    string
		offset  int64
		next    int64
		dropped int64
	}{
		{"empty", 4, nil, 0, "", 0, 0, 0},
		{"within", 8, []string{"abc", "de"}, 0, "abcde", 0, 5, 0},
		{"from middle", 8, []string{"abcde"}, 2, "cde", 2, 5, 0},
		{"wrapped", 4, []string{"abc", "def"}, 0, "cdef", 2, 6, 2},
		{"wrapped from kept", 4, []string{"abc", "def"}, 3, "def", 3, 6, 0},
		{"one big write", 4, []string{"0123456789"}, 0, "6789", 6, 10, 6},
		{"past the end", 4, []string{"ab"}, 9, "", 2, 2, 0},
		{"at the end", 4, []string{"abcdef"}, 6, "", 6, 6, 0},
		{"dropped from a later offset", 4, []string{"abcdefgh"}, 3, "efgh", 4, 8, 1},
		{"many small", 3, []string{"a", "b", "c", "d", "e"}, 0, "cde", 2, 5, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRing(tc.cap)
			for _, w := range tc.writes {
				if n, err := r.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write: %d, %v", n, err)
				}
			}
			c := r.Read(tc.from)
			if string(c.Data) != tc.data || c.Offset != tc.offset || c.Next != tc.next || c.Dropped != tc.dropped {
				t.Errorf("Read(%d) = %q offset %d next %d dropped %d; want %q %d %d %d", tc.from, c.Data, c.Offset, c.Next, c.Dropped, tc.data, tc.offset, tc.next, tc.dropped)
			}
		})
	}
}

// FuzzRing checks the ring against a plain copy of everything written,
// its cap changed now and then (setCap, the session's share of output):
// what it returns is always the right slice of the stream, at most the
// current cap bytes, no more memory than the cap, and offsets add up.
func FuzzRing(f *testing.F) {
	f.Add(uint8(4), []byte("abcdefghij"), uint8(3), int64(2), []byte{})
	f.Add(uint8(8), []byte("abcdefghijklmnopqrstuvwxyz"), uint8(5), int64(0), []byte{3, 0, 9, 2})
	f.Fuzz(func(t *testing.T, capacity uint8, data []byte, step uint8, from int64, caps []byte) {
		c := int(capacity%64) + 1
		r := newRing(c)
		st := int(step%17) + 1
		for i, w := 0, 0; i < len(data); i, w = i+st, w+1 {
			if w < len(caps) {
				c = int(caps[w] % 65)
				r.setCap(c)
			}
			r.Write(data[i:min(i+st, len(data))])
			if k := r.Kept(); k > int64(c) {
				t.Fatalf("holds %d bytes, cap %d", k, c)
			}
		}
		if from < 0 {
			from = -from
		}
		from %= int64(len(data)) + 3
		ch := r.Read(from)
		if len(ch.Data) > c {
			t.Fatalf("kept %d bytes, cap %d", len(ch.Data), c)
		}
		if ch.Next != int64(len(data)) || ch.Offset+int64(len(ch.Data)) != ch.Next {
			t.Fatalf("offsets: %+v, total %d", ch, len(data))
		}
		if ch.Offset < int64(len(data)) && !bytes.Equal(ch.Data, data[ch.Offset:]) {
			t.Fatalf("data %q, want %q", ch.Data, data[ch.Offset:])
		}
		if from < ch.Offset && ch.Dropped != ch.Offset-from {
			t.Fatalf("dropped %d, from %d offset %d", ch.Dropped, from, ch.Offset)
		}
		if len(caps) == 0 && int64(len(ch.Data)) != min(int64(c), int64(len(data))-min(from, int64(len(data)))) && from <= ch.Offset {
			t.Fatalf("kept %d bytes of %d written, cap %d", len(ch.Data), len(data), c)
		}
	})
}

// TestRingSetCap: a smaller cap keeps the newest bytes and gives the
// memory back; a larger one lets it grow again, offsets exact.
func TestRingSetCap(t *testing.T) {
	r := newRing(8)
	r.Write([]byte("abcdefghij")) // keeps cdefghij, wrapped
	r.setCap(3)
	if c := r.Read(0); string(c.Data) != "hij" || c.Offset != 7 || c.Dropped != 7 || r.Kept() != 3 {
		t.Errorf("after shrinking: %+v, holds %d", c, r.Kept())
	}
	r.setCap(6)
	r.Write([]byte("klmn"))
	if c := r.Read(0); string(c.Data) != "ijklmn" || c.Offset != 8 || c.Next != 14 || r.Kept() > 6 {
		t.Errorf("after growing: %+v, holds %d", c, r.Kept())
	}
	r.setCap(0)
	r.Write([]byte("op"))
	if c := r.Read(0); len(c.Data) != 0 || c.Offset != 16 || c.Dropped != 16 || r.Kept() != 0 {
		t.Errorf("at cap 0: %+v, holds %d", c, r.Kept())
	}
}
