package linux

import (
	"encoding/json"
	"os"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/internal/bytestr"
)

// HelperEnv is the environment marker that selects a helper role. Its value
// names the role:
//
//   - "zygote" holds one sandbox: its namespaces and mounts, its Landlock
//     ruleset and seccomp filter. It forks every command of the sandbox.
//   - "probe" only checks that the namespaces can be created and set up.
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
	}
	os.Exit(125)
}

// writeStatus writes one status line on fd.
func writeStatus(fd int, s status) {
	b, _ := json.Marshal(bytestr.Out(s))
	_, _ = unix.Write(fd, append(b, '\n'))
}
