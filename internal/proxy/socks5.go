package proxy

import (
	"bufio"
	"encoding/binary"
	"io"
	"net/netip"
)

// This file is the SOCKS5 wire protocol (RFC 1928, with RFC 1929
// username/password authentication): the handshake up to the request, and
// the replies.

// SOCKS5 constants.
const (
	socksVersion = 0x05 // the first byte of every SOCKS5 greeting and request

	socksAuthNone     = 0x00
	socksAuthPassword = 0x02
	socksNoAcceptable = 0xff // "no acceptable methods"

	socksAuthVersion = 0x01 // RFC 1929 sub-negotiation version
	socksAuthSuccess = 0x00
	socksAuthFailure = 0x01

	socksCmdConnect = 0x01

	socksATYPIPv4   = 0x01
	socksATYPDomain = 0x03
	socksATYPIPv6   = 0x04
)

// SOCKS5 reply codes.
const (
	socksSucceeded        = 0x00
	socksGeneralFailure   = 0x01
	socksNotAllowed       = 0x02
	socksHostUnreachable  = 0x04
	socksConnRefused      = 0x05
	socksCmdNotSupported  = 0x07
	socksATYPNotSupported = 0x08
)

// SOCKS5 field sizes.
const (
	socksMaxMethods    = 255
	socksRequestHeader = 4 // VER CMD RSV ATYP, and VER REP RSV ATYP in replies
	socksIPv4Len       = 4
	socksIPv6Len       = 16
)

// socksRequest is a parsed SOCKS5 CONNECT request.
type socksRequest struct {
	host string     // normalized
	ip   netip.Addr // host as an address, for ATYP IPv4 and IPv6 (and literal names)
	port int
}

// socksError is a handshake failure that the protocol itself detected.
type socksError struct {
	msg string
}

func (e *socksError) Error() string { return "moat: proxy: socks5: " + e.msg }

func socksFail(msg string) error { return &socksError{msg: msg} }

// socksHandshake runs the server side of a SOCKS5 handshake up to and
// including the request: method negotiation, RFC 1929 authentication when
// credential is set (user "moat"), and the request itself. Failures that
// the protocol can report (no acceptable method, bad credentials, an
// unsupported command or address type) are answered on w before the error
// returns. It reads only what the client sends and never more than the
// protocol's field lengths allow.
func socksHandshake(r *bufio.Reader, w io.Writer, credential string) (socksRequest, error) {
	var hdr [2]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return socksRequest{}, err
	}
	if hdr[0] != socksVersion {
		return socksRequest{}, socksFail("not a SOCKS5 greeting")
	}
	var methods [socksMaxMethods]byte
	if _, err := io.ReadFull(r, methods[:hdr[1]]); err != nil {
		return socksRequest{}, err
	}
	method := byte(socksNoAcceptable)
	offered := func(m byte) bool {
		for _, o := range methods[:hdr[1]] {
			if o == m {
				return true
			}
		}
		return false
	}
	switch {
	case credential != "" && offered(socksAuthPassword):
		method = socksAuthPassword
	case credential != "":
	case offered(socksAuthNone):
		method = socksAuthNone
	case offered(socksAuthPassword):
		// No credential is needed, but a client configured with one
		// may offer only username/password: accept any.
		method = socksAuthPassword
	}
	if _, err := w.Write([]byte{socksVersion, method}); err != nil {
		return socksRequest{}, err
	}
	if method == socksNoAcceptable {
		return socksRequest{}, socksFail("no acceptable authentication method")
	}
	if method == socksAuthPassword {
		if err := socksAuthenticate(r, w, credential); err != nil {
			return socksRequest{}, err
		}
	}
	return socksReadRequest(r, w)
}

// socksAuthenticate runs the RFC 1929 sub-negotiation. An empty credential
// accepts any user name and password.
func socksAuthenticate(r *bufio.Reader, w io.Writer, credential string) error {
	var buf [255]byte
	ver, err := r.ReadByte()
	if err != nil {
		return err
	}
	if ver != socksAuthVersion {
		w.Write([]byte{socksAuthVersion, socksAuthFailure})
		return socksFail("bad username/password version")
	}
	user, err := readShortField(r, buf[:])
	if err != nil {
		return err
	}
	u := string(user)
	pass, err := readShortField(r, buf[:])
	if err != nil {
		return err
	}
	if credential != "" && !credentialMatches(u, string(pass), credential) {
		w.Write([]byte{socksAuthVersion, socksAuthFailure})
		return socksFail("authentication failed")
	}
	_, err = w.Write([]byte{socksAuthVersion, socksAuthSuccess})
	return err
}

// readShortField reads a length byte and that many bytes into buf.
func readShortField(r *bufio.Reader, buf []byte) ([]byte, error) {
	n, err := r.ReadByte()
	if err != nil {
		return nil, err
	}
	if _, err := io.ReadFull(r, buf[:n]); err != nil {
		return nil, err
	}
	return buf[:n], nil
}

// socksReadRequest reads the client's request; only CONNECT is served.
func socksReadRequest(r *bufio.Reader, w io.Writer) (socksRequest, error) {
	var hdr [socksRequestHeader]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return socksRequest{}, err
	}
	if hdr[0] != socksVersion {
		socksReply(w, socksGeneralFailure, netip.AddrPort{})
		return socksRequest{}, socksFail("bad request version")
	}
	if hdr[1] != socksCmdConnect {
		socksReply(w, socksCmdNotSupported, netip.AddrPort{})
		return socksRequest{}, socksFail("only CONNECT is supported")
	}
	var req socksRequest
	var buf [255]byte
	switch hdr[3] {
	case socksATYPIPv4:
		if _, err := io.ReadFull(r, buf[:socksIPv4Len]); err != nil {
			return socksRequest{}, err
		}
		req.ip = netip.AddrFrom4([4]byte(buf[:socksIPv4Len]))
	case socksATYPIPv6:
		if _, err := io.ReadFull(r, buf[:socksIPv6Len]); err != nil {
			return socksRequest{}, err
		}
		req.ip = netip.AddrFrom16([16]byte(buf[:socksIPv6Len]))
	case socksATYPDomain:
		name, err := readShortField(r, buf[:])
		if err != nil {
			return socksRequest{}, err
		}
		host, ip, err := normalizeHost(string(name))
		if err != nil {
			// Read the port so that the reply follows the whole
			// request, then refuse.
			io.ReadFull(r, buf[:2])
			socksReply(w, socksHostUnreachable, netip.AddrPort{})
			return socksRequest{}, err
		}
		req.host, req.ip = host, ip
	default:
		socksReply(w, socksATYPNotSupported, netip.AddrPort{})
		return socksRequest{}, socksFail("unsupported address type")
	}
	if _, err := io.ReadFull(r, buf[:2]); err != nil {
		return socksRequest{}, err
	}
	req.port = int(binary.BigEndian.Uint16(buf[:2]))
	if req.port == 0 {
		socksReply(w, socksGeneralFailure, netip.AddrPort{})
		return socksRequest{}, socksFail("port 0")
	}
	if req.host == "" {
		req.host = req.ip.String()
	}
	return req, nil
}

// socksReply sends a reply with code rep and the bound address bnd (all
// zeros when invalid).
func socksReply(w io.Writer, rep byte, bnd netip.AddrPort) error {
	b := make([]byte, 0, socksRequestHeader+socksIPv6Len+2)
	a := bnd.Addr().Unmap()
	switch {
	case a.Is6():
		b = append(b, socksVersion, rep, 0, socksATYPIPv6)
		b = append(b, a.AsSlice()...)
	case a.Is4():
		b = append(b, socksVersion, rep, 0, socksATYPIPv4)
		b = append(b, a.AsSlice()...)
	default:
		b = append(b, socksVersion, rep, 0, socksATYPIPv4, 0, 0, 0, 0)
	}
	b = binary.BigEndian.AppendUint16(b, bnd.Port())
	_, err := w.Write(b)
	return err
}
