// Command landlockfloor is the Landlock-only floor of bench/startup.sh:
// what the cheapest useful Linux sandbox costs. It restricts itself with
// go-landlock (system directories readable and executable, nothing else;
// no namespaces, no seccomp, no mounts) and execs its arguments. moat does
// far more, so the ratio against this floor says how close the rest of
// moat's layers come to free.
//
//	landlockfloor /bin/true
package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: landlockfloor COMMAND [ARG...]")
		os.Exit(2)
	}
	err := landlock.V5.BestEffort().RestrictPaths(
		landlock.RODirs("/usr", "/bin", "/lib", "/lib64", "/etc").IgnoreIfMissing(),
		landlock.RWFiles("/dev/null"),
	)
	if err != nil {
		fmt.Fprintln(os.Stderr, "landlockfloor:", err)
		os.Exit(125)
	}
	path, err := exec.LookPath(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "landlockfloor:", err)
		os.Exit(127)
	}
	err = syscall.Exec(path, os.Args[1:], os.Environ())
	fmt.Fprintln(os.Stderr, "landlockfloor:", err)
	os.Exit(126)
}
