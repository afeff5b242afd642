package policy

import (
	"errors"
	"fmt"
	"strings"

	"github.com/moat-sandbox/moat"
)

// EnvVar is one environment entry of a layer: a host variable passed
// through, or a variable set to a value. The zero value is invalid.
type EnvVar struct {
	// Name is the variable's name.
	Name string
	// Value is the value to set; empty for a passthrough.
	Value string
	// Set is true for NAME=VALUE, false to pass the host's NAME through.
	Set bool
}

// neverPassed are prefixes of variables the sandbox strips whatever the
// policy says: dynamic-loader controls and moat's own markers. Asking for
// one is an error rather than a silent no-op.
var neverPassed = []string{"LD_", "DYLD_", "_MOAT_"}

// CheckEnvVar checks that v names a portable variable (a letter or
// underscore, then letters, digits and underscores) that the sandbox may
// receive, with a value free of NUL bytes. Its error says only what is
// wrong.
func CheckEnvVar(v EnvVar) error {
	if v.Name == "" {
		return errors.New("empty variable name")
	}
	if !validEnvName(v.Name) {
		return fmt.Errorf("%q is not a valid variable name (letters, digits and _, not starting with a digit)", v.Name)
	}
	if strings.IndexByte(v.Value, 0) >= 0 {
		return errors.New("value contains a NUL byte")
	}
	for _, p := range neverPassed {
		if strings.HasPrefix(v.Name, p) {
			return fmt.Errorf("%s* variables are never passed to the sandbox", p)
		}
	}
	return nil
}

// validEnvName reports whether name matches [A-Za-z_][A-Za-z0-9_]*.
func validEnvName(name string) bool {
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// mergeEnv turns entries, in order, into moat's Env. For a name given more
// than once the last entry wins, whether it passes the host's value or sets
// one; names keep the order of their first appearance.
func mergeEnv(entries []EnvVar) moat.Env {
	last := map[string]EnvVar{}
	var order []string
	for _, e := range entries {
		if _, seen := last[e.Name]; !seen {
			order = append(order, e.Name)
		}
		last[e.Name] = e
	}
	var out moat.Env
	for _, name := range order {
		if e := last[name]; e.Set {
			out.Set = append(out.Set, e.Name+"="+e.Value)
		} else {
			out.Passthrough = append(out.Passthrough, name)
		}
	}
	return out
}
