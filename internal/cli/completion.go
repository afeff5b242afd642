package cli

import (
	"github.com/spf13/cobra"
)

// completionShells are the shells "moat completion" writes a script for.
var completionShells = []string{"bash", "zsh", "fish"}

// newCompletionCmd builds "moat completion bash|zsh|fish". The scripts ask
// moat itself, through cobra's hidden __complete command, for commands,
// flags and flag values.
func newCompletionCmd(std stdio) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish",
		Short: "Print a shell completion script",
		Long: `Print the completion script for bash, zsh or fish on standard output.

bash (needs the bash-completion package):
  source <(moat completion bash)                      # this shell only
  moat completion bash > ~/.local/share/bash-completion/completions/moat

zsh:
  source <(moat completion zsh)                       # this shell only
  moat completion zsh > "${fpath[1]}/_moat"

fish:
  moat completion fish > ~/.config/fish/completions/moat.fish`,
		ValidArgs:             completionShells,
		DisableFlagsInUseLine: true,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("completion: want one shell: bash, zsh or fish")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			var err error
			switch args[0] {
			case "bash":
				err = root.GenBashCompletionV2(std.out, true)
			case "zsh":
				err = root.GenZshCompletion(std.out)
			case "fish":
				err = root.GenFishCompletion(std.out, true)
			default:
				return usagef("completion: unknown shell %q; want bash, zsh or fish", args[0])
			}
			if err != nil {
				return failf("completion: %v", err)
			}
			return nil
		},
	}
}

// flagValueCompletions are the values the shells offer for the flags that
// take one of a few words.
var flagValueCompletions = map[string][]string{
	"isolation":    {"strict", "default", "permissive"},
	"network":      {"deny", "allow-all", "allow-list"},
	"io-priority":  {"utility", "background"},
	"audit-rotate": {"daily"},
}

// completeFlagValues registers the completions of c's word-valued flags and
// of --workdir (a directory); the other flags complete file names.
func completeFlagValues(c *cobra.Command) {
	for name, words := range flagValueCompletions {
		if c.Flags().Lookup(name) != nil {
			_ = c.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(words, cobra.ShellCompDirectiveNoFileComp))
		}
	}
	if c.Flags().Lookup("workdir") != nil {
		_ = c.MarkFlagDirname("workdir")
	}
}
