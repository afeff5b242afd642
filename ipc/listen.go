package ipc

import (
	"fmt"
	"net"
	"os"
)

// MaxSocketPath is the longest socket path [Listen] accepts: sun_path
// holds 104 bytes on macOS and the BSDs (108 on Linux), one of them the
// terminating NUL.
const MaxSocketPath = 103

// EndpointEnv is the environment variable that tells a client inside the
// sandbox where the host's socket is.
const EndpointEnv = "MOAT_IPC_ENDPOINT"

// Listen creates a Unix socket at path, which must not exist, and makes it
// mode 0600. Put it in a directory only its owner can enter: the mode of
// the socket alone is not checked on every system. Closing the listener
// removes the socket file.
func Listen(path string) (net.Listener, error) {
	if len(path) > MaxSocketPath {
		return nil, fmt.Errorf("ipc: socket path %q is %d bytes, over the %d-byte limit of a Unix socket address", path, len(path), MaxSocketPath)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("ipc: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, fmt.Errorf("ipc: %w", err)
	}
	return l, nil
}
