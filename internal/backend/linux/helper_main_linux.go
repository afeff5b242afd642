package linux

import (
	"encoding/json"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// HelperEnv is the environment marker that selects a helper role. Its value
// names the role:
//
//   - "zygote" holds one sandbox: its namespaces and mounts, its Landlock
//     ruleset and seccomp filter. It forks every command of the sandbox.
//   - "init" is PID 1 of the sandbox's PID namespace: it reaps orphans and
//     ends every process of the sandbox when moat goes away.
//   - "probe" only checks that the namespaces can be created and set up.
//   - "hold" keeps new namespaces alive until the zygote has joined them.
const HelperEnv = "_MOAT_HELPER_ROLE"

// Fixed descriptors of the helpers.
const (
	ctrlFD   = 3 // control socket; its EOF means moat is gone
	statusFD = 4 // one status line: ready, or why not
)

// HelperMain runs a helper role and never returns. It must be called from a
// package init function: the calling thread, the main thread, is locked.
func HelperMain(role string) {
	runtime.LockOSThread() // never unlocked
	os.Unsetenv(HelperEnv)
	switch role {
	case "probe":
		probeRole()
	case "zygote":
		os.Exit(zygoteMain())
	case "init":
		os.Exit(initMain())
	case "hold":
		os.Exit(holdRole())
	}
	os.Exit(125)
}

// writeStatus writes one status line on fd.
func writeStatus(fd int, s status) {
	b, _ := json.Marshal(s)
	_, _ = unix.Write(fd, append(b, '\n'))
}
