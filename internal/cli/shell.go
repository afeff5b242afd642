package cli

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/creack/pty"
	"github.com/spf13/cobra"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/cli/termfilter"
)

// outputDrain bounds how long shell waits, after the shell exits, for its
// last output; a leftover process holding the terminal must not hang moat.
const outputDrain = 2 * time.Second

// newShellCmd builds "moat shell".
func newShellCmd(std stdio) *cobra.Command {
	var flags *sandboxFlags
	var shell string
	var quiet bool
	c := &cobra.Command{
		Use:   "shell [flags]",
		Short: "Start an interactive shell in a sandbox",
		Long: `Start an interactive shell in a sandbox, on a terminal of its own.

The shell is --shell, else $SHELL if it lies under /usr or /bin, else
/bin/bash if present, else /bin/sh. moat exits with the shell's status.`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			return flags.report.wrap(func() error { return runShell(std, flags, quiet, shell) })
		},
	}
	flags = addSandboxFlags(c.Flags())
	c.Flags().BoolVar(&quiet, "quiet", false, quietUsage)
	flags.report = addReportJSONFlag(c.Flags(), "shell", std.err)
	completeFlagValues(c)
	c.Flags().StringVar(&shell, "shell", "", "run the shell `PATH` (default: $SHELL if under /usr or /bin, else /bin/bash, else /bin/sh)")
	return c
}

// runShell runs shell, or the default shell, in a sandbox on a new pty
// whose other side moat connects to its own standard streams. Once the
// shell is done and the sandbox closed, it prints what the sandbox was
// refused, unless quiet.
func runShell(std stdio, flags *sandboxFlags, quiet bool, shell string) (err error) {
	flags.heel.stdin = std.in
	cfg, err := flags.config()
	if err != nil {
		return err
	}
	defer flags.closeAuditLog()
	defer flags.printKept(std.err) // heel.go
	if flags.heel.stdinRead {
		return usagef("--config -: standard input is the shell's terminal; give the config as a file")
	}
	py, err := flags.configVenv(std.err) // heel_python.go: the file's [python]
	if err != nil {
		return err
	}
	cfg.Python = py
	if shell == "" {
		shell = defaultShell(os.Getenv("SHELL"), isExecutable)
	}
	sigs := catchSignals()
	defer sigs.stop()
	defer saveTerminals(std)() // tty.go
	sb, err := moat.New(cfg)
	if err != nil {
		return sandboxError(err)
	}
	flags.report.sandbox(sb)
	defer func() { err = finish(sb, std.err, quiet, flags.report, err) }()

	cmd := sb.Command(shell)
	cmd.Env = []string{"SHELL=" + shell}
	activateVenv(sb, cmd, py)
	return runOnTerminal(std, sb, sigs, "shell", cmd)
}

// runOnTerminal runs cmd on a new terminal whose other side moat connects
// to its own standard streams, raw, and returns when cmd has ended and its
// output is drained. The terminal is made inside the sandbox, so the
// program finds it by name (tty, ssh, sudo); a host pty where the sandbox
// has no /dev/pts. what names the command in errors.
func runOnTerminal(std stdio, sb *moat.Sandbox, sigs *forwarder, what string, cmd *moat.Cmd) error {
	master, slave, ok, err := sb.OpenTerminal()
	if err == nil && !ok {
		master, slave, err = pty.Open()
	}
	if err != nil {
		return failf("%s: open a terminal: %v", what, err)
	}
	defer master.Close()
	stopResize := syncSize(std.in, master)
	defer stopResize()

	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.Setctty = true
	err = cmd.Start()
	slave.Close() // the command holds it now; its last close ends the output
	if err != nil {
		return startError(err)
	}
	sigs.forwardTo(cmd.Process)
	restore := makeRaw(std.in)
	defer restore()

	output := make(chan struct{})
	go func() {
		// An interactive session keeps the terminal's answers to its
		// programs' queries, but no clipboard writes (OSC 52).
		out := termfilter.New(std.out, termfilter.Clipboard)
		_, _ = io.Copy(out, master) // ends with EIO once the command is gone
		_ = out.Close()
		close(output)
	}()
	go copyInput(master, std.in)

	waitErr := cmd.Wait()
	select {
	case <-output:
	case <-time.After(outputDrain):
		_ = master.SetReadDeadline(time.Now())
	}
	return waitErr
}

// copyInput copies moat's input to the terminal. At the end of an input
// that is not a terminal it types ^D, so that the shell sees end of file.
func copyInput(master io.Writer, in io.Reader) {
	if _, err := io.Copy(master, in); err == nil {
		_, _ = master.Write([]byte{4})
	}
}

// defaultShell picks $SHELL when it names an executable under /usr or /bin,
// which the sandbox can run; otherwise /bin/bash if present, else /bin/sh.
func defaultShell(env string, executable func(string) bool) string {
	if filepath.IsAbs(env) {
		p := filepath.Clean(env)
		if (strings.HasPrefix(p, "/usr/") || strings.HasPrefix(p, "/bin/")) && executable(p) {
			return p
		}
	}
	if executable("/bin/bash") {
		return "/bin/bash"
	}
	return "/bin/sh"
}

// isExecutable reports whether path is a regular file with an execute bit.
func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}
