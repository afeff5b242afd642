package linux

import "golang.org/x/sys/unix"

// closeStrayFDs marks every descriptor from first up close-on-exec, so
// neither our own descriptors nor anything the caller leaked to us (a
// descriptor opened without O_CLOEXEC) reaches a sandboxed command, whose
// descriptors are exactly the ones it was given.
func closeStrayFDs(first int) error {
	if err := unix.CloseRange(uint(first), ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err == nil {
		return nil
	}
	// Kernels before 5.11: walk the descriptor table instead.
	entries, err := readDirNames("/proc/self/fd")
	if err != nil {
		return err
	}
	for _, name := range entries {
		fd := atoi(name)
		if fd >= first {
			unix.CloseOnExec(fd)
		}
	}
	return nil
}
