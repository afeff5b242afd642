package linux

import (
	"fmt"

	"github.com/moat-sandbox/moat/internal/seccomp"
	"golang.org/x/sys/unix"
)

// buildSeccomp assembles moat's filter for this architecture.
func buildSeccomp(allowInetTCP bool) ([]unix.SockFilter, error) {
	arch, ok := seccomp.NativeArch()
	if !ok {
		return nil, fmt.Errorf("seccomp: no filter for this architecture")
	}
	return seccomp.Assemble(arch, seccomp.Options{AllowInetStream: allowInetTCP})
}

// installFilter loads the filter on the calling thread; no_new_privs must
// be set.
func installFilter(f []unix.SockFilter) error { return seccomp.Install(f) }
