package cli

import (
	"errors"
	"math/big"
	"strconv"
	"strings"
)

// unlimited is what size and count flags accept to lift a limit. It maps to
// -1, which moat.Limits reads as "no limit".
const unlimited = "unlimited"

// maxSizeLen bounds the text parseSize accepts; no real size is longer.
const maxSizeLen = 64

var (
	errSize  = errors.New("want a size like 512M or 2G")
	errLarge = errors.New("too large")
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

// parseSize parses a byte count: a decimal number with an optional binary
// suffix K, M, G or T (also KiB..TiB and KB..TB, any case), or "unlimited",
// which gives -1. A fraction such as 1.5G is rounded down to whole bytes;
// plain bytes must be whole. Zero is allowed and means moat's default.
func parseSize(s string) (int64, error) {
	if strings.EqualFold(s, unlimited) {
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
		return 0, errLarge
	}
	return n.Int64(), nil
}

// formatSize is the inverse of parseSize: the shortest exact spelling of n,
// using the largest suffix that divides it, and "unlimited" for -1.
func formatSize(n int64) string {
	if n == -1 {
		return unlimited
	}
	if n > 0 {
		for _, u := range []struct {
			suffix string
			shift  uint
		}{{"T", 40}, {"G", 30}, {"M", 20}, {"K", 10}} {
			if n%(1<<u.shift) == 0 {
				return strconv.FormatInt(n>>u.shift, 10) + u.suffix
			}
		}
	}
	return strconv.FormatInt(n, 10)
}

// parseCount parses a non-negative whole number or "unlimited" (-1).
func parseCount(s string) (int64, error) {
	if strings.EqualFold(s, unlimited) {
		return -1, nil
	}
	if !isDigits(s) {
		return 0, errors.New(`want a whole number or "unlimited"`)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, errLarge
	}
	return n, nil
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
