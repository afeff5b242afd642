package proxy

import (
	"bufio"
	"net"
	"net/netip"
	"time"
)

// serveSOCKS5 serves one SOCKS5 client: handshake, admission, dial, reply,
// then a byte relay until both sides are done.
func (s *Server) serveSOCKS5(c net.Conn, br *bufio.Reader, lr *limitedReader) {
	sr, err := socksHandshake(br, c, s.cfg.Credential)
	if err != nil {
		return
	}
	lr.setLimit(-1)
	c.SetReadDeadline(time.Time{})

	r := Request{Protocol: ProtocolSOCKS5, Host: sr.host, Port: sr.port}
	adm, ref := s.admit(s.ctx, r, sr.ip, netip.Addr{})
	if ref != nil {
		rep := byte(socksNotAllowed)
		if ref.kind == refusedByResolve {
			rep = socksHostUnreachable
		}
		socksReply(c, rep, netip.AddrPort{})
		return
	}
	up, _, err := s.dial(s.ctx, adm, sr.port)
	if err != nil {
		rep := byte(socksHostUnreachable)
		if isRefused(err) {
			rep = socksConnRefused
		}
		socksReply(c, rep, netip.AddrPort{})
		return
	}
	if !s.track(up) {
		return
	}
	defer s.untrack(up)
	var bnd netip.AddrPort
	if a, ok := up.LocalAddr().(*net.TCPAddr); ok {
		bnd = a.AddrPort()
	}
	if socksReply(c, socksSucceeded, bnd) != nil {
		return
	}
	s.relay(c, br, up)
}
