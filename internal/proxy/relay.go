package proxy

import (
	"bufio"
	"io"
	"net"
)

// relay copies bytes between client and up in both directions until both
// are done. When one side ends its sending (EOF), the other side's write
// half is closed (a half-close), so each peer sees the other's EOF while
// still being able to answer. Any other error closes both connections.
// pending holds bytes the client sent before the tunnel was established;
// they go upstream first. The caller closes both connections afterwards.
func (s *Server) relay(client net.Conn, pending *bufio.Reader, up net.Conn) {
	done := make(chan struct{})
	s.goroutine(func() {
		defer close(done)
		_, err := io.Copy(client, up)
		endCopy(client, up, err)
	})
	err := writePending(up, pending)
	if err == nil {
		// From the raw connection, not the bufio.Reader, so that the
		// kernel can splice TCP to TCP.
		_, err = io.Copy(up, client)
	}
	endCopy(up, client, err)
	<-done
}

// writePending writes what br has buffered to w.
func writePending(w io.Writer, br *bufio.Reader) error {
	n := br.Buffered()
	if n == 0 {
		return nil
	}
	b, _ := br.Peek(n)
	_, err := w.Write(b)
	br.Discard(n)
	return err
}

// endCopy finishes one direction, dst <- src: a clean EOF half-closes dst,
// an error closes both.
func endCopy(dst, src net.Conn, err error) {
	if err == nil {
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			if cw.CloseWrite() == nil {
				return
			}
		}
	}
	dst.Close()
	src.Close()
}
