package cli

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/moat-sandbox/moat/internal/hostinput"
)

// maxTrustBytes bounds the file moat trust hashes.
const maxTrustBytes = 1 << 30

// newTrustCmd builds "moat trust".
func newTrustCmd(std stdio) *cobra.Command {
	var list, remove, forget bool
	c := &cobra.Command{
		Use:   "trust FILE... | --list | --remove FILE... | --forget-place DIR...",
		Short: "Pin the content of a config, policy or fragment that a sandbox could have written",
		Long: `moat refuses (exit 2) a config file, a policy document, a fragment, a
--python interpreter or a library it would read, run or load on the host when a
sandbox could have written it: when it lies in a working directory, a kept
home, a writable grant or a venv of the current run or of any earlier run, is
reached through a link there, has other hard links, or another user may write
it. moat remembers each such place of every run in its state directory, which
no sandbox can see.

Read the file, then run moat trust FILE: moat records its real path and the
SHA-256 of its content, and accepts exactly that content at that path. A later
change, by you or by a sandbox, is refused again until you trust it again.
A link on the way that lies in such a place is never accepted: name the file
by its real path.

  moat trust FILE...              pin each file's current content
  moat trust --list               print the pins, then the places remembered
  moat trust --remove FILE...     drop the pins of FILE
  moat trust --forget-place DIR   forget that sandboxes could write DIR (only
                                  once nothing a sandbox wrote there remains)`,
		Example: `  moat trust moat.toml
  moat run --config moat.toml --workdir . -- make test`,
		RunE: func(_ *cobra.Command, args []string) error {
			return runTrust(std, list, remove, forget, args)
		},
	}
	fs := c.Flags()
	fs.BoolVar(&list, "list", false, "print the trusted files and the places sandboxes could write")
	fs.BoolVar(&remove, "remove", false, "drop the pins of the files named")
	fs.BoolVar(&forget, "forget-place", false, "forget the places named: nothing a sandbox wrote there remains")
	return c
}

// runTrust does one moat trust.
func runTrust(std stdio, list, remove, forget bool, args []string) error {
	n := 0
	for _, b := range []bool{list, remove, forget} {
		if b {
			n++
		}
	}
	switch {
	case n > 1:
		return usagef("trust: --list, --remove and --forget-place exclude each other")
	case list && len(args) > 0:
		return usagef("trust --list: takes no arguments")
	case !list && len(args) == 0:
		return usagef("trust: missing FILE (usage: moat trust FILE..., or --list)")
	}
	store, err := hostStore()
	if err != nil {
		return err
	}
	switch {
	case list:
		pins, err := store.Pins()
		if err != nil {
			return fail(err)
		}
		places, err := store.Places()
		if err != nil {
			return fail(err)
		}
		for _, p := range pins {
			fmt.Fprintf(std.out, "trusted %s %s\n", p.Sum, quoteOddPath(p.Path))
		}
		for _, p := range places {
			fmt.Fprintf(std.out, "place %s\n", quoteOddPath(p))
		}
		return nil
	case remove:
		for _, a := range args {
			ok, err := store.Untrust(hostinput.RealPath(a))
			if err != nil {
				return fail(err)
			}
			if !ok {
				return usagef("trust --remove %q: not trusted", a)
			}
		}
		return nil
	case forget:
		for _, a := range args {
			ok, err := store.ForgetPlace(a)
			if err != nil {
				return fail(err)
			}
			if !ok {
				return usagef("trust --forget-place %q: not a place sandboxes could write", a)
			}
		}
		return nil
	}
	for _, a := range args {
		pin, err := hostinput.PinOf(a, maxTrustBytes)
		if err != nil {
			return usagef("trust: %s", err)
		}
		if err := store.Trust(pin); err != nil {
			return fail(err)
		}
		fmt.Fprintf(std.out, "trusted %s %s\n", pin.Sum, quoteOddPath(pin.Path))
	}
	return nil
}

// quoteOddPath returns p quoted when it holds a character that is not
// printable or a space, else p.
func quoteOddPath(p string) string {
	if q := strconv.Quote(p); q[1:len(q)-1] != p || containsSpace(p) {
		return q
	}
	return p
}

// containsSpace reports whether s holds a space.
func containsSpace(s string) bool {
	for _, r := range s {
		if r == ' ' {
			return true
		}
	}
	return false
}
