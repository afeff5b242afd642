package cli

import (
	"errors"
	"strings"

	"github.com/moat-sandbox/moat/policy"
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

// parseEnvFlag parses NAME or NAME=VALUE, checked as a config file's [env]
// entries are (policy.CheckEnvVar): a portable name, no NUL, and nothing
// the sandbox would strip anyway.
func parseEnvFlag(s string) (envFlag, error) {
	name, value, set := strings.Cut(s, "=")
	if name == "" {
		return envFlag{}, errors.New("want NAME or NAME=VALUE")
	}
	if err := policy.CheckEnvVar(policy.EnvVar{Name: name, Value: value, Set: set}); err != nil {
		return envFlag{}, err
	}
	return envFlag{Name: name, Value: value, Set: set}, nil
}
