package proxy

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"strconv"
	"syscall"
)

// dial connects to the first of the admitted addresses that answers, on
// port, within the dial timeout. Only checked addresses are ever dialed.
func (s *Server) dial(ctx context.Context, adm admission, port int) (net.Conn, netip.Addr, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.DialTimeout)
	defer cancel()
	var first error
	for _, a := range adm.addrs {
		addr := netip.AddrPortFrom(a.Unmap(), uint16(port)).String()
		c, err := s.cfg.Dial(ctx, "tcp", addr)
		if err == nil {
			return c, a, nil
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, netip.Addr{}, first
}

// lookupError shortens a resolver error to its cause ("no such host"),
// without the resolver's own address.
func lookupError(err error) error {
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		if dnsErr.IsNotFound {
			return errors.New("no such host")
		}
		if dnsErr.IsTimeout {
			return errors.New("timed out")
		}
		return errors.New(dnsErr.Err)
	}
	return err
}

// dialErrorText shortens a dial error to its cause ("connect: connection
// refused", "timed out"), without the addresses net.OpError adds.
func dialErrorText(err error) string {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return "timed out"
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Err != nil {
		return opErr.Err.Error()
	}
	return err.Error()
}

// isRefused reports whether a dial failed because the destination refused
// the connection (as opposed to being unreachable).
func isRefused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || isRefusedOS(err)
}

// hostPort formats host and port for messages, bracketing IPv6.
func hostPort(host string, port int) string {
	return net.JoinHostPort(host, strconv.Itoa(port))
}
