package policy

import (
	"errors"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/moat-sandbox/moat/internal/size"
)

// The parsers in this file read the values of limits, in the config file
// and on the command line alike. Their errors say only what is wrong, such
// as "want a size like 512M or 2G", for the caller to put after the subject
// (a flag, or a key and its line).

// Unlimited is what sizes and counts accept to lift a limit. It parses as
// -1, which [moat.Limits] reads as "no limit".
const Unlimited = "unlimited"

// maxSizeLen bounds the text ParseSize accepts; no real size is longer.
const maxSizeLen = 64

var (
	errSize     = errors.New("want a size like 512M or 2G")
	errCount    = errors.New(`want a whole number or "unlimited"`)
	errDuration = errors.New("want a duration like 30s or 2m")
	// ErrTooLarge says that a size, count or duration does not fit in 64
	// bits.
	ErrTooLarge = errors.New("too large")
)

// sizeShifts maps a lower-case size suffix to its power of two. Suffixes
// are binary whichever way they are spelled: 1K, 1KB and 1KiB are 1024.
var sizeShifts = map[string]uint{
	"": 0, "b": 0,
	"k": 10, "kb": 10, "kib": 10,
	"m": 20, "mb": 20, "mib": 20,
	"g": 30, "gb": 30, "gib": 30,
	"t": 40, "tb": 40, "tib": 40,
}

// ParseSize parses a byte count: a decimal number with an optional binary
// suffix K, M, G or T (also KiB..TiB and KB..TB, any case), or "unlimited",
// which gives -1. A fraction such as 1.5G is rounded down to whole bytes;
// plain bytes must be whole. Zero is allowed and means moat's default.
func ParseSize(s string) (int64, error) {
	if strings.EqualFold(s, Unlimited) {
		return -1, nil
	}
	if len(s) > maxSizeLen {
		return 0, errSize
	}
	end := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if end < 0 {
		end = len(s)
	}
	num, suffix := s[:end], strings.ToLower(s[end:])
	shift, ok := sizeShifts[suffix]
	if !ok {
		return 0, errSize
	}
	whole, frac, dotted := strings.Cut(num, ".")
	if !isDigits(whole) || dotted && (!isDigits(frac) || shift == 0) {
		return 0, errSize
	}
	// (whole.frac << shift), rounded down, computed exactly.
	n, _ := new(big.Int).SetString(whole+frac, 10)
	n.Lsh(n, shift)
	n.Quo(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(frac))), nil))
	if !n.IsInt64() {
		return 0, ErrTooLarge
	}
	return n.Int64(), nil
}

// FormatSize is the inverse of [ParseSize]: the shortest exact spelling of
// n, using the largest suffix that divides it, and "unlimited" for -1
// (internal/size spells it, for moat too).
func FormatSize(n int64) string { return size.Format(n) }

// ParseCount parses a non-negative whole number or "unlimited" (-1).
func ParseCount(s string) (int64, error) {
	if strings.EqualFold(s, Unlimited) {
		return -1, nil
	}
	if !isDigits(s) {
		return 0, errCount
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, ErrTooLarge
	}
	return n, nil
}

// ParseDuration parses a wall-clock limit: a Go duration such as 30s or
// 1m30s, or bare whole seconds. It must not be negative; zero means no
// limit.
func ParseDuration(s string) (time.Duration, error) {
	if isDigits(s) {
		secs, err := strconv.ParseInt(s, 10, 64)
		d := time.Duration(secs) * time.Second
		if err != nil || d/time.Second != time.Duration(secs) {
			return 0, ErrTooLarge
		}
		return d, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, errDuration
	}
	return d, nil
}

// isDigits reports whether s is one or more ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
