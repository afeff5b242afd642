package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/moat-sandbox/moat/ipc"
	"github.com/spf13/cobra"
)

// newIPCCmd builds "moat ipc NAME [ARGS...]": the client of a host
// command, for use inside a sandbox whose host registered it (the same
// client its shim on PATH runs). Everything after NAME is the command's,
// flags included.
func newIPCCmd(std stdio) *cobra.Command {
	return &cobra.Command{
		Use:   "ipc NAME [ARGS...]",
		Short: "Call a host command from inside a sandbox (typed IPC)",
		Long: `moat ipc calls the host command NAME, registered by the program that
created this sandbox, exactly as its shim on PATH does: --name value,
--name=value and --flag set its arguments, bare words fill its positional
ones, piped input is sent along (--stdin-arg NAME puts it in an argument),
and NAME -h prints its usage. A string response is printed as it is, any
other as JSON; an error prints "NAME: message" and exits 1 (2 for a usage
error). Without NAME it lists the commands. It needs MOAT_IPC_ENDPOINT,
which such a sandbox sets.`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return listIPC(std)
			}
			if args[0] == "-h" || args[0] == "--help" {
				return cmd.Help()
			}
			inv := ipc.Invocation{Name: args[0], Args: args[1:], Stdin: std.in, Stdout: std.out, Stderr: std.err}
			if code := inv.Run(context.Background()); code != 0 {
				return &exitStatus{code: code}
			}
			return nil
		},
	}
}

// listIPC prints the host's commands, one per line with its summary.
func listIPC(std stdio) error {
	ctx := context.Background()
	endpoint := os.Getenv(ipc.EndpointEnv)
	if endpoint == "" {
		return usagef("ipc: %s is not set: run moat ipc inside a sandbox whose host registered commands", ipc.EndpointEnv)
	}
	c, err := ipc.Dial(ctx, endpoint)
	if err != nil {
		return failf("ipc: %v", err)
	}
	defer c.Close()
	cmds, err := c.Commands(ctx)
	if err != nil {
		return failf("ipc: %v", err)
	}
	for _, ci := range cmds {
		line := ci.Name
		if ci.Summary != "" {
			line += "\t" + ci.Summary
		}
		if _, err := fmt.Fprintln(std.out, line); err != nil {
			return fail(err)
		}
	}
	return nil
}
