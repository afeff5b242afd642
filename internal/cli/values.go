package cli

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/moat-sandbox/moat"
)

// The flag values below implement pflag.Value. Set checks its argument and
// returns only the problem; flagError names the flag and the argument.
// String returns "" for an unset value so that help shows no default.

// sizeValue is a byte count flag; see parseSize.
type sizeValue int64

// Set parses s with parseSize.
func (v *sizeValue) Set(s string) error {
	n, err := parseSize(s)
	if err == nil {
		*v = sizeValue(n)
	}
	return err
}

// String returns the size as parseSize reads it, or "" if unset.
func (v *sizeValue) String() string {
	if *v == 0 {
		return ""
	}
	return formatSize(int64(*v))
}

// Type names the value in help.
func (v *sizeValue) Type() string { return "SIZE" }

// countValue is a whole-number flag that also takes "unlimited".
type countValue struct {
	n    int64
	unit string // shown in help, e.g. "N" or "SECONDS"
}

// Set parses s with parseCount.
func (v *countValue) Set(s string) error {
	n, err := parseCount(s)
	if err == nil {
		v.n = n
	}
	return err
}

// String returns the count, or "" if unset.
func (v *countValue) String() string {
	switch v.n {
	case 0:
		return ""
	case -1:
		return unlimited
	}
	return strconv.FormatInt(v.n, 10)
}

// Type names the value in help.
func (v *countValue) Type() string { return v.unit }

// durationValue is a wall-clock flag: a Go duration such as 30s or 1m30s,
// or bare whole seconds. Zero means no limit.
type durationValue time.Duration

// Set parses s as a non-negative duration.
func (v *durationValue) Set(s string) error {
	var d time.Duration
	var err error
	if isDigits(s) {
		var secs int64
		secs, err = strconv.ParseInt(s, 10, 64)
		d = time.Duration(secs) * time.Second
		if err != nil || d/time.Second != time.Duration(secs) {
			return errLarge
		}
	} else {
		d, err = time.ParseDuration(s)
	}
	if err != nil || d < 0 {
		return errors.New("want a duration like 30s or 2m")
	}
	*v = durationValue(d)
	return nil
}

// String returns the duration, or "" if unset.
func (v *durationValue) String() string {
	if *v == 0 {
		return ""
	}
	return time.Duration(*v).String()
}

// Type names the value in help.
func (v *durationValue) Type() string { return "DURATION" }

// niceValue is a scheduling niceness from 0 to 19.
type niceValue int

// Set parses s as a whole number from 0 to 19.
func (v *niceValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 19 || !isDigits(s) {
		return errors.New("want 0 (unchanged) through 19; priority can only be lowered")
	}
	*v = niceValue(n)
	return nil
}

// String returns the niceness, or "" if unset.
func (v *niceValue) String() string {
	if *v == 0 {
		return ""
	}
	return strconv.Itoa(int(*v))
}

// Type names the value in help.
func (v *niceValue) Type() string { return "N" }

// ioPriorityValue is a disk priority: utility or background.
type ioPriorityValue moat.IOPriority

// Set accepts utility, background or default.
func (v *ioPriorityValue) Set(s string) error {
	p, err := moat.ParseIOPriority(s)
	if err != nil || s == "" {
		return errors.New("want utility or background")
	}
	*v = ioPriorityValue(p)
	return nil
}

// String returns the priority's name, or "" if unset.
func (v *ioPriorityValue) String() string {
	if moat.IOPriority(*v) == moat.IOPriorityDefault {
		return ""
	}
	return moat.IOPriority(*v).String()
}

// Type names the value in help.
func (v *ioPriorityValue) Type() string { return "utility|background" }

// envList collects repeated --env flags in order.
type envList []envFlag

// Set parses s with parseEnvFlag and appends it.
func (v *envList) Set(s string) error {
	e, err := parseEnvFlag(s)
	if err == nil {
		*v = append(*v, e)
	}
	return err
}

// String lists the flags given, comma-separated.
func (v *envList) String() string {
	parts := make([]string, len(*v))
	for i, e := range *v {
		parts[i] = e.String()
	}
	return strings.Join(parts, ",")
}

// Type names the value in help.
func (v *envList) Type() string { return "NAME[=VALUE]" }

// env turns the flags into moat's Env. For a name given more than once,
// the last flag wins, whether it passes the host value or sets one.
func (v envList) env() moat.Env {
	last := map[string]envFlag{}
	var order []string
	for _, e := range v {
		if _, seen := last[e.Name]; !seen {
			order = append(order, e.Name)
		}
		last[e.Name] = e
	}
	var out moat.Env
	for _, name := range order {
		if e := last[name]; e.Set {
			out.Set = append(out.Set, e.String())
		} else {
			out.Passthrough = append(out.Passthrough, name)
		}
	}
	return out
}
