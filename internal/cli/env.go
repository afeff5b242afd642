package cli

import (
	"errors"
	"fmt"
	"strings"
)

// envFlag is one --env argument: NAME passes the host's value through,
// NAME=VALUE sets it.
type envFlag struct {
	// Name is the variable's name.
	Name string
	// Value is the value to set; empty for a bare NAME.
	Value string
	// Set is true for NAME=VALUE, false for a bare NAME.
	Set bool
}

// String spells e as it is given on the command line.
func (e envFlag) String() string {
	if e.Set {
		return e.Name + "=" + e.Value
	}
	return e.Name
}

// neverPassed are prefixes of variables the sandbox strips whatever the
// policy says: dynamic-loader controls and moat's own markers. Asking for
// one is an error rather than a silent no-op.
var neverPassed = []string{"LD_", "DYLD_", "_MOAT_"}

// parseEnvFlag parses NAME or NAME=VALUE. NAME must be a portable variable
// name: a letter or underscore, then letters, digits and underscores.
func parseEnvFlag(s string) (envFlag, error) {
	name, value, set := strings.Cut(s, "=")
	switch {
	case name == "":
		return envFlag{}, errors.New("want NAME or NAME=VALUE")
	case !validEnvName(name):
		return envFlag{}, fmt.Errorf("%q is not a valid variable name (letters, digits and _, not starting with a digit)", name)
	case strings.IndexByte(value, 0) >= 0:
		return envFlag{}, errors.New("value contains a NUL byte")
	}
	for _, p := range neverPassed {
		if strings.HasPrefix(name, p) {
			return envFlag{}, fmt.Errorf("%s* variables are never passed to the sandbox", p)
		}
	}
	return envFlag{Name: name, Value: value, Set: set}, nil
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
