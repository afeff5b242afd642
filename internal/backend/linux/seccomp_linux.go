package linux

import (
	"fmt"

	"github.com/moat-sandbox/moat/internal/seccomp"
)

// installSeccomp loads moat's filter on the calling thread. no_new_privs
// must already be set.
func installSeccomp(allowInetTCP bool) error {
	arch, ok := seccomp.NativeArch()
	if !ok {
		return fmt.Errorf("seccomp: no filter for this architecture")
	}
	prog, err := seccomp.Assemble(arch, seccomp.Options{AllowInetStream: allowInetTCP})
	if err != nil {
		return err
	}
	return seccomp.Install(prog)
}
