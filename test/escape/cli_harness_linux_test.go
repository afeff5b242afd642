//go:build linux

package escape_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/cli"
)

// cliEnv makes this test binary the moat command line when it is
// re-executed by moatCLICmd, so that the battery attacks the command line
// users run, as the unprivileged user, without a separate build. (The
// sandbox helper's re-execution is intercepted earlier, by moat's own
// init.)
const cliEnv = "MOAT_ESCAPE_CLI"

func init() {
	if os.Getenv(cliEnv) == "1" {
		os.Unsetenv(cliEnv)
		os.Exit(cli.Main(os.Args[1:]))
	}
}

// moatCLICmd returns a command that runs the moat command line with args
// in dir, with env added to this process's environment.
func moatCLICmd(t *testing.T, dir string, env []string, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command(exe, args...)
	c.Dir = dir
	c.Env = append(append(os.Environ(), cliEnv+"=1"), env...)
	return c
}

// moatCLI runs the moat command line with args in dir, with env added, and
// returns what it printed and how it exited.
func moatCLI(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	c := moatCLICmd(t, dir, env, args...)
	var out, errb strings.Builder
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	return toResult(out.String(), errb.String(), err)
}
