package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/moat-sandbox/moat/policy"
)

// heelAliases are heel's names of moat's flags (and a few more in the same
// family, such as the max- names of the config file's limits), mapped to
// moat's own: each alias is the canonical flag, by pflag's name
// normalization, so it sets the same value and counts as given.
var heelAliases = map[string]string{
	"max-memory":       "memory",
	"max-cpu-time":     "cpu-time",
	"max-file-size":    "file-size",
	"max-processes":    "processes",
	"max-open-files":   "open-files",
	"max-disk":         "disk",
	"max-disk-inodes":  "disk-inodes",
	"protect-keychain": "protect-keychains",
	"working-dir":      "workdir",
}

// heelFlags are the flags heel has and moat had no name for.
type heelFlags struct {
	keepWorkDir *bool    // --keep-working-dir; nil until given
	verbose     bool     // -v/--verbose: MOAT_TRACE=1
	kept        string   // the kept fresh working directory, once resolved
	stdin       *os.File // where --config - reads; nil is os.Stdin
	stdinRead   bool     // --config - read the config from standard input
}

// freeShorthand returns letter unless fs already has a flag by it.
func freeShorthand(fs *pflag.FlagSet, letter string) string {
	if fs.ShorthandLookup(letter) != nil {
		return ""
	}
	return letter
}

// addHeelFlags registers heel's flags and aliases on fs, whose moat flags
// addSandboxFlags registered, and says in each canonical flag's help which
// aliases it has.
func addHeelFlags(fs *pflag.FlagSet, f *sandboxFlags) {
	fs.Var(passthroughValue{&f.env}, "env-passthrough", "pass the host's variable `NAME` into the sandbox (repeatable); alias of --env NAME (heel)")
	fs.Var(optionalBool{&f.heel.keepWorkDir}, "keep-working-dir", "keep the fresh working directory after the run and print its path on stderr at exit (heel); a --workdir is always kept")
	fs.Lookup("keep-working-dir").NoOptDefVal = "true"
	fs.BoolVarP(&f.heel.verbose, "verbose", freeShorthand(fs, "v"), false, "print how long each layer of the sandbox took, on stderr, as MOAT_TRACE=1 does (heel's -v)")
	prev := fs.GetNormalizeFunc()
	fs.SetNormalizeFunc(func(set *pflag.FlagSet, name string) pflag.NormalizedName {
		if canon, ok := heelAliases[name]; ok {
			name = canon
		}
		return prev(set, name)
	})
	byCanon := map[string][]string{}
	for alias, canon := range heelAliases {
		byCanon[canon] = append(byCanon[canon], alias)
	}
	for canon, aliases := range byCanon {
		fl := fs.Lookup(canon)
		if fl == nil {
			continue
		}
		sort.Strings(aliases)
		fl.Usage += " (alias: --" + strings.Join(aliases, ", --") + ", heel's name)"
	}
	if fl := fs.Lookup("network"); fl != nil {
		fl.Usage += ` (heel's "allow" is allow-all)`
	}
}

// passthroughValue is --env-passthrough: heel's way to pass a host
// variable through, which sets nothing.
type passthroughValue struct{ list *envList }

// Set takes a variable's name and adds it to the --env list, in order.
func (v passthroughValue) Set(s string) error {
	if strings.Contains(s, "=") {
		return errors.New("want a variable's NAME; --env NAME=VALUE sets one")
	}
	return v.list.Set(s)
}

// String is "": the names given show under --env.
func (v passthroughValue) String() string { return "" }

// Type names the value in help.
func (v passthroughValue) Type() string { return "NAME" }

// applyVerbose makes -v/--verbose what MOAT_TRACE=1 is: the host's and
// the sandbox's per-layer trace on stderr.
func (f *sandboxFlags) applyVerbose() {
	if f.heel.verbose {
		os.Setenv("MOAT_TRACE", "1")
	}
}

// printKept tells, at exit, where the fresh working directory that
// --keep-working-dir (or [workdir] keep) kept is.
func (f *sandboxFlags) printKept(w io.Writer) {
	if f.heel.kept != "" {
		fmt.Fprintf(w, "moat: working directory kept: %s\n", printable(f.heel.kept))
	}
}

// loadConfig reads the config file at path, or from standard input for
// "-". Standard input then belongs to the config: the command gets
// /dev/null (childStdin), never what is left of it.
func (f *sandboxFlags) loadConfig(path string) (*policy.File, error) {
	if path != "-" {
		return f.loadConfigFile(path) // hostinputs.go
	}
	in := f.heel.stdin
	if in == nil {
		in = os.Stdin
	}
	f.heel.stdinRead = true
	return policy.LoadFrom(policy.StdinName, in)
}

// childStdin is the command's standard input: in, unless --config - read
// the config from it, which leaves the command /dev/null (nil).
func (f *sandboxFlags) childStdin(in *os.File) io.Reader {
	if f.heel.stdinRead {
		return nil
	}
	return in
}

// dropKept removes the fresh working directory that --keep-working-dir
// made, if nothing was written there: for moat doctor, which runs no
// command, so there is nothing to keep.
func (f *sandboxFlags) dropKept() {
	if f.heel.kept != "" {
		os.Remove(f.heel.kept)
	}
}
