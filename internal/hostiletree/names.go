package hostiletree

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
)

// ErrBudget is what a removal returns when its work budget ran out before
// the trash was empty; the next call goes on where it stopped.
var ErrBudget = errors.New("work budget spent")

// deepName names the n-th directory a removal moved up into the trash.
func deepName(n int) string { return "deep-" + strconv.Itoa(n) + "-" + RandomHex() }

// RandomHex returns 8 random bytes in hex, for names in a trash.
func RandomHex() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
