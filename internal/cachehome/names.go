package cachehome

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
)

// deepName names the n-th directory a removal moved up into the trash.
func deepName(n int) string { return "deep-" + strconv.Itoa(n) + "-" + randomHex() }

// randomHex returns 8 random bytes in hex, for names in the trash.
func randomHex() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// errBudget stops a walk whose work budget is spent.
var errBudget = errors.New("work budget spent")
