package hostinput

import (
	"crypto/rand"
	"encoding/hex"
)

// randomSuffix returns 8 random bytes in hex, for temporary names.
func randomSuffix() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
