package cli

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/policy"
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

// Set parses s with policy.ParseDuration.
func (v *durationValue) Set(s string) error {
	d, err := policy.ParseDuration(s)
	if err == nil {
		*v = durationValue(d)
	}
	return err
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

// Set parses s with policy.ParseNice.
func (v *niceValue) Set(s string) error {
	n, err := policy.ParseNice(s)
	if err == nil {
		*v = niceValue(n)
	}
	return err
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

// Set accepts utility, background or default, with policy.ParseIOPriority.
func (v *ioPriorityValue) Set(s string) error {
	p, err := policy.ParseIOPriority(s)
	if err == nil {
		*v = ioPriorityValue(p)
	}
	return err
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

// env turns the flags into moat's Env, as the merge of the config file
// and the flags does: for a name given more than once, the last flag wins,
// whether it passes the host value or sets one.
func (v envList) env() moat.Env {
	res, _ := policy.Merge(policy.Layer{Env: v.vars()})
	return res.Config.Env
}

// vars returns the flags as policy entries, in order.
func (v envList) vars() []policy.EnvVar {
	var out []policy.EnvVar
	for _, e := range v {
		out = append(out, policy.EnvVar{Name: e.Name, Value: e.Value, Set: e.Set})
	}
	return out
}

// optionalBool is a switch that takes an optional =BOOL: a bare flag means
// true. Unset, it stays nil, so that it overrides a config file only when
// given, either way.
type optionalBool struct{ p **bool }

// Set parses s as a boolean: 1, t, true, 0, f, false, in any case.
func (v optionalBool) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("want true or false")
	}
	*v.p = &b
	return nil
}

// String returns "true" or "false", or "" if unset.
func (v optionalBool) String() string {
	if v.p == nil || *v.p == nil {
		return ""
	}
	return strconv.FormatBool(**v.p)
}

// Type is "bool", so that help shows the flag without a value.
func (v optionalBool) Type() string { return "bool" }

// isolationValue is --isolation; nil until given.
type isolationValue struct{ p *moat.Isolation }

// Set parses s with moat.Isolation.UnmarshalText.
func (v *isolationValue) Set(s string) error {
	var iso moat.Isolation
	err := iso.UnmarshalText([]byte(s))
	if err != nil {
		return errors.New("want strict, default or permissive")
	}
	v.p = &iso
	return nil
}

// String returns the level, or "" if unset.
func (v *isolationValue) String() string {
	if v.p == nil {
		return ""
	}
	return v.p.String()
}

// Type names the value in help.
func (v *isolationValue) Type() string { return "strict|default|permissive" }

// choiceValue is a string flag checked by parse; "" until given.
type choiceValue struct {
	s     string
	parse func(string) (string, error)
	typ   string // shown in help
}

// Set checks s with parse.
func (v *choiceValue) Set(s string) error {
	out, err := v.parse(s)
	if err == nil {
		v.s = out
	}
	return err
}

// String returns the value, or "" if unset.
func (v *choiceValue) String() string { return v.s }

// Type names the value in help.
func (v *choiceValue) Type() string { return v.typ }

// listValue collects a repeatable flag, each value checked and normalized
// by parse.
type listValue struct {
	items []string
	parse func(string) (string, error)
	typ   string // shown in help
}

// Set checks s with parse and appends it.
func (v *listValue) Set(s string) error {
	out, err := v.parse(s)
	if err == nil {
		v.items = append(v.items, out)
	}
	return err
}

// String lists the values given, comma-separated.
func (v *listValue) String() string { return strings.Join(v.items, ",") }

// Type names the value in help.
func (v *listValue) Type() string { return v.typ }

// nonEmptyPath accepts any path but the empty one.
func nonEmptyPath(s string) (string, error) {
	if s == "" {
		return "", errors.New("empty path")
	}
	return s, nil
}
