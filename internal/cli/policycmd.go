package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/moat-sandbox/moat/policy"
)

// newPolicyCmd builds "moat policy" and its subcommands.
func newPolicyCmd(std stdio) *cobra.Command {
	c := &cobra.Command{
		Use:   "policy schema|validate|explain",
		Short: "Print, check or explain a JSON policy document for moat exec",
		Long: `Work with the JSON policy documents of moat exec --policy.

  moat policy schema          print the JSON Schema (draft 2020-12) of a document
  moat policy validate FILE   exit 0 and print nothing if FILE (- for standard
                              input) is a valid document, else exit 2 with the error
  moat policy explain FILE    print the effective rules of FILE and the layer of
                              the sandbox that enforces each`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			return usagef("policy: missing subcommand: schema, validate or explain")
		},
	}
	one := func(name string) cobra.PositionalArgs {
		return func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("policy %s: want one document, FILE or - for standard input", name)
			}
			return nil
		}
	}
	c.AddCommand(&cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of a policy document",
		Args:  noArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := std.out.Write(policy.DocumentSchema())
			return fail(err)
		},
	}, &cobra.Command{
		Use:   "validate FILE|-",
		Short: "Check a policy document: exit 0 silently, or 2 with the error",
		Args:  one("validate"),
		RunE: func(_ *cobra.Command, args []string) error {
			_, err := readPolicy(std, args[0])
			return err
		},
	}, &cobra.Command{
		Use:   "explain FILE|-",
		Short: "Print the effective rules of a policy document and what enforces each",
		Long: `Print the effective rules of a policy document, as moat exec would apply them
here (the cwd and its .moat-deny and .moat-write fragments are read), each with
the layer of the sandbox that enforces it on Linux. Nothing is created: no audit
log is opened and no sandbox is built; moat doctor says which layers this host
really has.`,
		Args: one("explain"),
		RunE: func(_ *cobra.Command, args []string) error {
			d, err := readPolicy(std, args[0])
			if err != nil {
				return err
			}
			rules, err := d.Explain(execHost())
			if err != nil {
				return setupError(err)
			}
			var b strings.Builder
			for _, r := range rules {
				fmt.Fprintf(&b, "%s\n    by: %s\n", printable(r.Rule), r.Layer)
			}
			_, err = std.out.WriteString(b.String())
			return fail(err)
		},
	})
	return c
}
