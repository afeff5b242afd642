package moattest

import (
	"os"
	"syscall"
)

// WriteFile is os.WriteFile holding off every fork of this process until
// the file is closed. A test that writes a program and then runs it, while
// other tests start processes in parallel, otherwise meets ETXTBSY: a child
// forked while the file was open for writing holds that descriptor until it
// execs, and the kernel refuses to run a file open for writing. Go's fork
// takes syscall.ForkLock for writing; holding it for reading here keeps
// the descriptor out of every child.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	return os.WriteFile(path, data, perm)
}
