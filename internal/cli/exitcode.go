package cli

import (
	"errors"
	"io/fs"
	"os/exec"
	"strings"

	"github.com/moat-sandbox/moat"
)

// Exit statuses of moat itself; a command's own status passes through.
const (
	exitUsage      = 2   // a mistake on the command line
	exitFailure    = 125 // moat could not do its job
	exitCannotExec = 126 // the command exists but may not be executed
	exitNotFound   = 127 // the command does not exist
)

// exitCode maps what a subcommand returned to moat's exit status and the
// line, if any, to print on standard error.
func exitCode(err error) (int, string) {
	var (
		status *exitStatus
		usage  *usageError
		failed *failure
		exited *moat.ExitError
	)
	switch {
	case err == nil:
		return 0, ""
	case errors.As(err, &status):
		return status.code, ""
	case errors.As(err, &usage):
		return exitUsage, errorLine(err)
	case errors.As(err, &failed):
		return exitFailure, errorLine(err)
	case errors.As(err, &exited):
		return exitedCode(exited)
	case errors.Is(err, exec.ErrNotFound):
		return exitNotFound, errorLine(err)
	case errors.Is(err, fs.ErrPermission):
		return exitCannotExec, errorLine(err)
	}
	return exitFailure, errorLine(err)
}

// exitedCode is the status of a command that ran: its own code, or 128+N
// after signal N, with a message only when moat ended it.
func exitedCode(e *moat.ExitError) (int, string) {
	code := e.StatusCode()
	if code <= 0 || code > 255 {
		code = exitFailure // not a status a command can have: say so
	}
	if r := strings.TrimSpace(e.Reason()); r != "" {
		return code, errorLine(errors.New(r))
	}
	return code, ""
}
