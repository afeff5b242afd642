//go:build !linux

package serve

import "net"

// checkPeer cannot read a peer's user namespace here: every connection is
// unverified, and needs the token.
func checkPeer(c net.Conn) (connKind, error) { return kindUnixUnverified, nil }

// peerPID is unknown here.
func peerPID(c net.Conn) int { return 0 }
