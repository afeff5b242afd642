package proxy

import (
	"net/http"
	"net/netip"
)

// connect serves a CONNECT request to t: admission, dial, "200 Connection
// established", then a byte relay until both sides are done. The client
// connection ends with the tunnel.
func (h *httpConn) connect(t target) {
	s := h.s
	h.dropUpstream()
	r := Request{Protocol: ProtocolConnect, Host: t.host, Port: t.port}
	adm, ref := s.admit(s.ctx, r, t.ip, netip.Addr{})
	if ref != nil {
		writeError(h.bw, refusalStatus(ref), s.refusalMessage(ref), true)
		return
	}
	up, _, err := s.dial(s.ctx, adm, t.port)
	if err != nil {
		writeError(h.bw, http.StatusBadGateway, dialMessage(t, err), true)
		return
	}
	if !s.track(up) {
		return
	}
	defer s.untrack(up)
	h.bw.WriteString("HTTP/1.1 200 Connection established\r\n\r\n")
	if h.bw.Flush() != nil {
		return
	}
	s.relay(h.c, h.br, up)
}
