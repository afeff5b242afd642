package cachehome

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"sort"
)

// Digest accumulates the fields of a policy in a canonical, unambiguous
// form: each field is its name and its values, every one length-prefixed.
// The zero value is not usable; make one with [NewDigest].
type Digest struct {
	h hash.Hash
}

// NewDigest returns an empty digest.
func NewDigest() *Digest { return &Digest{h: sha256.New()} }

func (d *Digest) put(s string) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(s)))
	d.h.Write(n[:])
	d.h.Write([]byte(s))
}

// Add records field name with values, in the order given.
func (d *Digest) Add(name string, values ...string) {
	d.put(name)
	d.put(itoa(len(values)))
	for _, v := range values {
		d.put(v)
	}
}

// AddSet records field name with values in sorted order, for fields whose
// order does not change the policy.
func (d *Digest) AddSet(name string, values ...string) {
	v := append([]string(nil), values...)
	sort.Strings(v)
	d.Add(name, v...)
}

// Sum returns the digest in hex.
func (d *Digest) Sum() string { return hex.EncodeToString(d.h.Sum(nil)) }

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}
