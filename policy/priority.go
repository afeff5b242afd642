package policy

import (
	"errors"
	"math"
	"strconv"

	"github.com/moat-sandbox/moat"
)

// The priorities are checked by moat's own rules, moat.Config.Validate, so
// that the range a front end accepts is the one moat.New accepts.

// errNice is moat's wording of the nice range, for a value that is not a
// number at all.
var errNice = niceProblem(-1)

// ParseNice parses a niceness step from 0 (unchanged) to [moat.MaxNice].
// Its error says only what is wrong.
func ParseNice(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || !isDigits(s) {
		return 0, errNice
	}
	if err := niceProblem(int64(n)); err != nil {
		return 0, err
	}
	return n, nil
}

// niceProblem returns what moat.Config.Validate says is wrong with nice
// n, without the field and value, or nil if moat accepts it.
func niceProblem(n int64) error {
	if n < math.MinInt32 || n > math.MaxInt32 {
		n = -1 // out of every int's range: as wrong as any negative step
	}
	err := moat.Config{Nice: int(n)}.Validate()
	var ce *moat.ConfigError
	if errors.As(err, &ce) {
		return errors.New(ce.Problem)
	}
	return err
}

// ParseIOPriority parses a disk priority, utility or background (default,
// the zero value, is also accepted; the empty string is not). Its error
// says only what is wrong.
func ParseIOPriority(s string) (moat.IOPriority, error) {
	var p moat.IOPriority
	err := p.UnmarshalText([]byte(s))
	if err != nil || s == "" {
		return 0, errors.New("want utility or background")
	}
	return p, nil
}
