package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/moat-sandbox/moat/internal/hostinput"
	"github.com/moat-sandbox/moat/internal/session"
	"github.com/moat-sandbox/moat/policy"
)

// The named policies of "moat serve" and "moat mcp". The person who starts
// the server owns them: each is read once, at start, as a host input (a
// file a sandbox could have written is refused unless "moat trust" pinned
// it), merged over moat run's defaults and pinned; no client ever sends a
// policy, and a session may only narrow the one it names.

// defaultPolicyName is the policy served when none is named: moat run's
// defaults with no config file.
const defaultPolicyName = "default"

// policyName is what a served policy may be called.
var policyName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// loadServePolicies reads the policies that specs name, each NAME=FILE or
// FILE (named after the file, without its extension). FILE is a TOML config
// file (moat run's --config) or, when it ends in .json, a JSON policy
// document (moat exec's --policy). No specs serve moat run's defaults as
// "default". Every mistake is a usage error naming the spec.
func loadServePolicies(specs []string) ([]session.Policy, error) {
	if len(specs) == 0 {
		res, err := policy.Merge(policy.Layer{Isolation: &cliIsolation})
		if err != nil {
			return nil, usagef("the default policy: %s", err)
		}
		return []session.Policy{{Name: defaultPolicyName, Source: "moat run's defaults", Result: res}}, nil
	}
	var out []session.Policy
	seen := map[string]bool{}
	for _, spec := range specs {
		p, err := loadServePolicy(spec)
		if err != nil {
			return nil, err
		}
		if seen[p.Name] {
			return nil, usagef("--policy %q: a second policy named %q; name each one (NAME=FILE)", spec, p.Name)
		}
		seen[p.Name] = true
		out = append(out, p)
	}
	return out, nil
}

// loadServePolicy reads one NAME=FILE or FILE spec.
func loadServePolicy(spec string) (session.Policy, error) {
	name, path, named := strings.Cut(spec, "=")
	if !named {
		path = spec
		base := filepath.Base(path)
		name = strings.ToLower(strings.TrimSuffix(base, filepath.Ext(base)))
	}
	refuse := func(format string, args ...any) error {
		return usagef("--policy %q: %s", spec, fmt.Sprintf(format, args...))
	}
	if !policyName.MatchString(name) {
		return session.Policy{}, refuse("the name %q is not lower-case letters, digits, '-' and '_' (at most 64, starting with a letter or digit); give one as NAME=FILE", name)
	}
	if path == "" || path == "-" {
		return session.Policy{}, refuse("name a file: a served policy is read once from a file, never from standard input")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return session.Policy{}, refuse("%s", err)
	}
	layer, in, err := readServeLayer(abs)
	if err != nil {
		return session.Policy{}, refuse("%s", err)
	}
	res, err := policy.Merge(policy.Layer{Isolation: &cliIsolation}, layer)
	if err != nil {
		return session.Policy{}, refuse("%s", err)
	}
	places := resultPlaces(res) // hostinputs.go: what a session of it could write
	if err := in.CheckCurrent(places); err != nil {
		return session.Policy{}, refuse("%s", err)
	}
	if err := checkPythonInputs(res.Python, places); err != nil {
		return session.Policy{}, err
	}
	return session.Policy{Name: name, Source: abs, Result: res}, nil
}

// readServeLayer reads the file at path as a host input (refused when a
// sandbox could have written it) and returns its settings as a layer.
func readServeLayer(path string) (policy.Layer, *hostinput.Input, error) {
	if strings.EqualFold(filepath.Ext(path), ".json") {
		in, err := readHostInput(path, "policy document", maxPolicyBytes, nil)
		if err != nil {
			return policy.Layer{}, nil, err
		}
		doc, err := policy.ParseDocument(in.Data)
		if err != nil {
			return policy.Layer{}, nil, err
		}
		home, _ := os.UserHomeDir()
		l, err := doc.ServeLayer(filepath.Dir(path), home)
		return l, in, err
	}
	in, err := readHostInput(path, "config", maxConfigBytes, nil)
	if err != nil {
		return policy.Layer{}, nil, err
	}
	file, err := policy.Parse(path, in.Data)
	if err != nil {
		return policy.Layer{}, nil, err
	}
	return file.Layer, in, nil
}
