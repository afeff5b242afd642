package serve

import (
	"errors"
	"fmt"
	"io"
	"net"
)

// peerConn is an accepted connection and what its peer check found.
type peerConn struct {
	net.Conn
	kind connKind
}

// peerListener checks each connection's peer before the server reads a
// byte of it: a peer of another uid or another user namespace (every
// sandboxed process with namespaces) is closed at once.
type peerListener struct {
	net.Listener
	log io.Writer
}

// Accept returns the next connection whose peer passed the check.
func (l *peerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		kind, err := checkPeer(c)
		if err != nil {
			if l.log != nil {
				fmt.Fprintf(l.log, "moat serve: refused a connection on the socket: %v\n", err)
			}
			c.Close()
			continue
		}
		return &peerConn{Conn: c, kind: kind}, nil
	}
}

// errPeer marks a refused peer.
var errPeer = errors.New("peer refused")
