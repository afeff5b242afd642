//go:build !linux

package ipc

import "net"

// peerOf returns nil: no caller's directory is opened on this system, and
// Call.DirFile stays nil.
func peerOf(net.Conn) callerDirOpener { return nil }
