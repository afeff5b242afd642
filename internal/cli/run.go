package cli

import (
	"github.com/spf13/cobra"

	"github.com/moat-sandbox/moat"
)

// newRunCmd builds "moat run".
func newRunCmd(std stdio) *cobra.Command {
	var flags *sandboxFlags
	var quiet bool
	var redactOut *runRedactFlag // run_redact.go
	c := &cobra.Command{
		Use:   "run [flags] [--] COMMAND [ARG...]",
		Short: "Run a command in a sandbox",
		Long: `Run COMMAND in a sandbox, with moat's standard input, output and error.

Flags end at COMMAND: everything after it belongs to the command. moat exits
with the command's status, 128+N if signal N killed it, 126 if it cannot be
executed, 127 if it is not found, 125 if moat itself fails, and 2 for a bad
flag. SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2 and SIGWINCH sent to
moat are passed on to the command's process group; Ctrl-Z (SIGTSTP) stops the command and moat,
and SIGCONT resumes both.

SIZE is a number of bytes with an optional binary suffix K, M, G or T (also
KiB, MiB...), or "unlimited"; 0 or no flag means moat's default.

heel's command lines work unchanged: its names (--max-memory and the other
--max- limits, --network allow, -c, -e, -v, --working-dir, --env-passthrough,
--protect-keychain) are aliases of moat's, which each flag's help names, and
--keep-working-dir keeps the fresh working directory. --config - reads the
file from standard input; the command's standard input is then /dev/null.`,
		Example: `  moat run -- python3 -c 'print("hello from the sandbox")'
  moat run --workdir . --env PYTHONHASHSEED=0 --env TERM -- python3 script.py
  moat run --memory 1G --timeout 30s --workdir ./job -- sh ./build.sh   # nothing writable executes: run scripts through their interpreter
  moat trust moat.toml && moat run --config moat.toml --workdir . -- make test   # a config a sandbox can write needs a pin`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("run: missing command (usage: moat run [flags] [--] COMMAND [ARG...])")
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			return flags.report.wrap(func() error {
				return redactOut.wrap(std, func(std stdio) error { return runCommand(std, flags, quiet, args) })
			})
		},
	}
	c.Flags().SetInterspersed(false)
	flags = addSandboxFlags(c.Flags())
	c.Flags().BoolVar(&quiet, "quiet", false, quietUsage)
	flags.report = addReportJSONFlag(c.Flags(), "run", std.err)
	redactOut = addRunRedactFlag(c.Flags())
	completeFlagValues(c)
	return c
}

// runCommand runs args in a sandbox built from flags and returns the
// command's outcome for exitCode. Once the command is done and the sandbox
// closed, it prints what the sandbox was refused, unless quiet.
func runCommand(std stdio, flags *sandboxFlags, quiet bool, args []string) (err error) {
	flags.applyVerbose() // heel.go: -v is MOAT_TRACE=1
	flags.heel.stdin = std.in
	trace := newHostTrace()
	defer trace.print(std.err)
	trace.mark("runtime+flags")
	cfg, err := flags.config()
	if err != nil {
		return err
	}
	trace.mark("config")
	defer flags.closeAuditLog()
	defer flags.printKept(std.err) // heel.go: after Close, below
	sigs := catchSignals()
	defer sigs.stop()
	defer saveTerminals(std)()           // tty.go: the command holds them and may change their modes
	py, err := flags.configVenv(std.err) // heel_python.go: the file's [python]
	if err != nil {
		return err
	}
	cfg.Python = py
	sb, err := moat.New(cfg)
	if err != nil {
		return sandboxError(err)
	}
	trace.mark("new")
	flags.report.sandbox(sb)
	defer func() {
		err = finish(sb, std.err, quiet, flags.report, err)
		trace.mark("close")
	}()

	cmd := sb.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = flags.childStdin(std.in), std.out, std.err
	activateVenv(sb, cmd, py)
	printAtStart(sb, cmd, std.err, quiet) // early.go
	if err := cmd.Start(); err != nil {
		return startError(err)
	}
	trace.mark("start")
	flags.report.start()
	sigs.forwardTo(cmd.Process)
	err = cmd.Wait()
	// Close may take a while on a large workdir: a signal now stops moat
	// (its default action), and the run journal makes the next run finish
	// what Close did not.
	sigs.stop()
	trace.mark("wait")
	return err
}

// startError keeps the errors that say the command cannot be found or
// executed, which map to 127 and 126, and marks the rest as moat's own.
func startError(err error) error {
	if code, _ := exitCode(err); code == exitNotFound || code == exitCannotExec {
		return err
	}
	return fail(err)
}
