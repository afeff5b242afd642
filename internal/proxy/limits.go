package proxy

import (
	"net"
	"strconv"
	"time"
)

// This file bounds what one sandbox can make the proxy hold: the client
// connections it serves at once (Config.MaxConns) and the connections it
// refuses past that bound.

// maxRefusing bounds the connections refused past Config.MaxConns that are
// being answered at once; past it they are closed without an answer. Each
// is held for at most refuseTime.
const maxRefusing = 8

// refuseTime bounds the time the proxy spends answering a connection it
// refuses past Config.MaxConns: waiting for its first bytes, answering,
// and reading what the client still sends so that closing does not reset
// the answer away.
const refuseTime = 500 * time.Millisecond

// refuseDrain bounds the bytes read from a refused connection.
const refuseDrain = 64 << 10

// clientState is what trackClient did with a new client connection.
type clientState int

const (
	clientServed    clientState = iota // registered: serve it, then untrackClient
	clientOverLimit                    // not registered: MaxConns are open
	clientClosed                       // the Server is closed; c was closed
)

// trackClient registers the client connection c, unless the Server is
// closed or already serves Config.MaxConns client connections.
func (s *Server) trackClient(c net.Conn) clientState {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		c.Close()
		return clientClosed
	case s.clients >= s.cfg.MaxConns:
		return clientOverLimit
	}
	s.clients++
	s.conns[c] = struct{}{}
	return clientServed
}

// untrackClient closes the client connection c and frees its place.
func (s *Server) untrackClient(c net.Conn) {
	c.Close()
	s.mu.Lock()
	delete(s.conns, c)
	s.clients--
	s.mu.Unlock()
}

// connLimitReason is the audited reason, and the answer, for a connection
// refused past Config.MaxConns.
func (s *Server) connLimitReason() string {
	return "too many connections: this sandbox already has " + strconv.Itoa(s.cfg.MaxConns) +
		" connections open to the proxy, the most it may; close idle ones and retry"
}

// refuseConn refuses c, a client connection past Config.MaxConns: it is
// audited, then answered by a goroutine of its own when fewer than
// maxRefusing are being answered, or else closed at once. It never blocks
// the accept loop for longer than the audit takes.
func (s *Server) refuseConn(c net.Conn) {
	reason := s.connLimitReason()
	_ = s.audit(Record{Time: time.Now(), Reason: reason, ConnLimit: true}) // refused either way
	s.mu.Lock()
	answer := !s.closed && s.refusing < maxRefusing
	if answer {
		s.refusing++
		s.conns[c] = struct{}{}
		s.wg.Add(1)
	}
	s.mu.Unlock()
	if !answer {
		c.Close()
		return
	}
	go func() {
		defer s.wg.Done()
		defer func() {
			c.Close()
			s.mu.Lock()
			delete(s.conns, c)
			s.refusing--
			s.mu.Unlock()
		}()
		answerRefused(c, "moat: proxy: "+reason)
	}()
}

// answerRefused tells the client of a refused connection why, in its
// protocol: a SOCKS5 client (first byte 0x05) gets "no acceptable
// method", which ends its handshake, anything else a 503 whose body is
// msg. It takes at most refuseTime and reads at most refuseDrain bytes.
func answerRefused(c net.Conn, msg string) {
	c.SetDeadline(time.Now().Add(refuseTime))
	lr := &limitedReader{r: c, n: refuseDrain}
	br := getReader(lr)
	defer putReader(br)
	first, err := br.Peek(1)
	if err != nil {
		return
	}
	if first[0] == socksVersion {
		c.Write([]byte{socksVersion, socksNoAcceptable})
	} else {
		bw := getWriter(c)
		err := writeError(bw, 503, msg, true)
		putWriter(bw)
		if err != nil {
			return
		}
	}
	// Half-close and read what the client still sends, so that closing
	// with unread bytes does not reset the connection before the client
	// has read the answer.
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	br.WriteTo(discard{})
}

// discard is io.Discard without its ReaderFrom, so that WriteTo reads in
// the bufio.Reader's own buffer.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
