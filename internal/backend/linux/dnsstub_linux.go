package linux

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/dns/dnsmessage"
	"golang.org/x/sys/unix"
)

// The DNS stub. A sandbox with a network namespace has only lo: the host's
// resolver is unreachable, so every lookup would fail, some only after a
// timeout, and the user would see "could not resolve host" with no hint of
// why. Instead, the sandbox's /etc/resolv.conf names 127.0.0.1, where the
// zygote opens a TCP listener inside the namespace and passes it to moat,
// like the proxy's. moat answers every query "no such name" at once and
// reports the names, so that the run's summary can say what was looked up
// and which flag would allow it. It never resolves anything: under a policy
// the proxy resolves names itself, and the sandbox must go through it.
//
// TCP, not UDP: seccomp refuses every INET socket that is not SOCK_STREAM,
// so the sandbox's resolv.conf carries "options use-vc", which glibc and
// Go's own resolver honour by querying over TCP.

// dnsStubPort is where the stub listens inside the network namespace.
const dnsStubPort = 53

// sandboxResolvConf is the sandbox's /etc/resolv.conf.
const sandboxResolvConf = `# moat: this sandbox has no DNS. Its lookups are answered "no such name"
# and listed when the run ends, each with the flag that would allow it.
nameserver 127.0.0.1
options use-vc attempts:1 timeout:2
`

// Bounds on what a sandbox can make the stub do. In all: at most
// dnsStubConns goroutines with a dnsMaxQuery buffer each (64 KiB), and at
// most dnsStubRate answers a second after a burst of dnsStubBurst, so that
// the host's work for a looping resolver is bounded whatever the sandbox's
// --cpu-time.
const (
	dnsStubConns    = 16              // connections served at once; more are closed
	dnsStubQueries  = 64              // queries on one connection
	dnsStubIdle     = 5 * time.Second // a connection's deadline for each query
	dnsMaxNameBytes = 253
	// dnsMaxQuery bounds one query message. A question is at most 12 +
	// 255 + 4 bytes; an EDNS record with cookies or padding adds a few
	// hundred. A longer length prefix ends the connection unanswered.
	dnsMaxQuery  = 4096
	dnsStubRate  = 200 // answers a second, across connections, once the burst is spent
	dnsStubBurst = 200
)

// placeResolvConf makes the sandbox's /etc/resolv.conf, under the new root
// being built at root, the stub's. The file is written in a tmpfs of its
// own and mounted over the host's file without following it (it is often a
// link into /run, which the sandbox does not have); the tmpfs is then
// detached from the tree, the mount keeping it. (Not a file of the root's
// tmpfs, unlinked: an unlinked file still in use keeps that tmpfs from
// being made read-only.) Nothing is placed where the host has no
// resolv.conf.
func placeResolvConf(root string) error {
	target := root + "/etc/resolv.conf"
	fi, err := os.Lstat(target)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("resolv.conf: %w", err)
	}
	dir := root + "/.moat-resolv"
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("resolv.conf: %w", err)
	}
	defer os.Remove(dir)
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0755,size=16k"); err != nil {
		return fmt.Errorf("resolv.conf: %w", err)
	}
	defer unix.Unmount(dir, unix.MNT_DETACH)
	src := dir + "/resolv.conf"
	if err := os.WriteFile(src, []byte(sandboxResolvConf), 0o644); err != nil {
		return fmt.Errorf("resolv.conf: %w", err)
	}
	tree, err := unix.OpenTree(unix.AT_FDCWD, src, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err == nil {
		err = unix.MoveMount(tree, "", unix.AT_FDCWD, target, unix.MOVE_MOUNT_F_EMPTY_PATH)
		unix.Close(tree)
	}
	if errors.Is(err, unix.ENOSYS) && fi.Mode().IsRegular() {
		// Before Linux 5.2: a plain bind, which follows links, onto what
		// is known to be a file.
		err = unix.Mount(src, target, "", unix.MS_BIND, "")
	}
	if err != nil {
		return fmt.Errorf("resolv.conf: mount: %w", err)
	}
	if err := remount(target, unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC); err != nil {
		return fmt.Errorf("resolv.conf: %w", err)
	}
	return nil
}

// listenDNSStub opens the stub's listener on 127.0.0.1:53 in the current
// network namespace. The zygote holds CAP_NET_BIND_SERVICE over it (an
// ambient capability in its user namespace, see namespaceAttr), which every
// command drops.
func listenDNSStub() (int, error) {
	return listenLoopback(dnsStubPort)
}

// serveDNSStub answers the queries that arrive on ln until it is closed,
// calling query (which must not block) with each name asked. query may be
// nil.
func serveDNSStub(ln net.Listener, query func(name string)) {
	slots := make(chan struct{}, dnsStubConns)
	pace := newDNSPacer(dnsStubRate, dnsStubBurst)
	var backoff time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of descriptors, say (EMFILE, ENFILE, ENOBUFS): wait
			// and retry rather than leave the sandbox without its stub.
			var te interface{ Temporary() bool }
			var ne net.Error
			if (errors.As(err, &ne) && ne.Timeout()) || (errors.As(err, &te) && te.Temporary()) {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				time.Sleep(backoff)
				continue
			}
			return
		}
		backoff = 0
		select {
		case slots <- struct{}{}:
		default:
			c.Close() // the client sees its lookup fail, at once
			continue
		}
		go func() {
			defer func() { <-slots }()
			serveDNSConn(c, query, pace)
		}()
	}
}

// serveDNSConn answers the length-prefixed queries of one TCP connection,
// each no sooner than pace allows.
func serveDNSConn(c net.Conn, query func(string), pace *dnsPacer) {
	defer c.Close()
	buf := make([]byte, 2+dnsMaxQuery)
	for range dnsStubQueries {
		_ = c.SetDeadline(time.Now().Add(dnsStubIdle))
		if _, err := io.ReadFull(c, buf[:2]); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint16(buf[:2]))
		if n > dnsMaxQuery {
			return
		}
		if _, err := io.ReadFull(c, buf[2:2+n]); err != nil {
			return
		}
		if !pace.wait(dnsStubIdle) {
			return
		}
		resp, name, ok := answerDNS(buf[2 : 2+n])
		if !ok {
			return
		}
		if name != "" && query != nil {
			query(name)
		}
		out := make([]byte, 2, 2+len(resp))
		binary.BigEndian.PutUint16(out, uint16(len(resp)))
		if _, err := c.Write(append(out, resp...)); err != nil {
			return
		}
	}
}

// dnsPacer spaces answers at most rate a second after a burst, across
// all the connections of one stub. The zero value is not usable.
type dnsPacer struct {
	mu       sync.Mutex
	interval time.Duration
	window   time.Duration // interval * (burst-1): how far next may lag now
	next     time.Time     // the earliest time the next answer may go
}

func newDNSPacer(rate, burst int) *dnsPacer {
	iv := time.Second / time.Duration(rate)
	return &dnsPacer{interval: iv, window: iv * time.Duration(max(burst, 1)-1)}
}

// wait blocks until the next answer may go, and reports false, without
// waiting, when that is more than max away.
func (p *dnsPacer) wait(max time.Duration) bool {
	p.mu.Lock()
	now := time.Now()
	if p.next.Before(now.Add(-p.window)) {
		p.next = now.Add(-p.window)
	}
	d := p.next.Sub(now)
	if d > max {
		p.mu.Unlock()
		return false
	}
	p.next = p.next.Add(p.interval)
	p.mu.Unlock()
	if d > 0 {
		time.Sleep(d)
	}
	return true
}

// answerDNS answers one DNS query: "no such name" for a standard query,
// "not implemented" for any other opcode, with the question echoed. name
// is the name asked, normalized (see dnsName), or "" when there is nothing
// worth reporting (a reverse lookup, no question). ok is false for what is
// not a query at all, which gets no answer.
func answerDNS(msg []byte) (resp []byte, name string, ok bool) {
	var p dnsmessage.Parser
	h, err := p.Start(msg)
	if err != nil || h.Response {
		return nil, "", false
	}
	rh := dnsmessage.Header{
		ID:                 h.ID,
		Response:           true,
		OpCode:             h.OpCode,
		Authoritative:      true,
		RecursionDesired:   h.RecursionDesired,
		RecursionAvailable: true,
		RCode:              dnsmessage.RCodeNameError,
	}
	q, qerr := p.Question()
	if h.OpCode != 0 {
		rh.RCode = dnsmessage.RCodeNotImplemented
	} else if qerr != nil {
		rh.RCode = dnsmessage.RCodeFormatError
	}
	b := dnsmessage.NewBuilder(make([]byte, 0, 512), rh)
	if qerr == nil {
		if err := b.StartQuestions(); err != nil {
			return nil, "", false
		}
		if err := b.Question(q); err != nil {
			return nil, "", false
		}
		if h.OpCode == 0 && q.Type != dnsmessage.TypePTR {
			name = dnsName(q.Name)
		}
	}
	resp, err = b.Finish()
	if err != nil {
		return nil, "", false
	}
	return resp, name, true
}

// dnsName renders a question's name for a report: lower case, without the
// final dot, every byte other than a letter, digit, hyphen, underscore or
// dot between labels written as \DDD, as in a zone file. So a name can
// neither be mistaken for another nor carry terminal controls. The root
// name is "".
func dnsName(n dnsmessage.Name) string {
	s := strings.TrimSuffix(n.String(), ".")
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < 4*dnsMaxNameBytes; i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, `\%03d`, c)
		}
	}
	return b.String()
}

// dnsStubHello carries the stub's listener from the zygote to moat, right
// after the proxy's (if any). It comes without a descriptor when the
// zygote could not place the stub; the sandbox's lookups then fail as they
// would without it, at once (seccomp refuses UDP; lo is all there is).
type dnsStubHello struct {
	Error string `json:"error,omitempty"`
}

// dnsStubError is why the zygote could not open the stub's listener; it
// travels to moat in the dnsStubHello.
var dnsStubError string

// openDNSStub is the zygote's part, in the sandbox's new network
// namespace: the stub's listener, or -1 when it cannot be had.
func openDNSStub() int {
	fd, err := listenDNSStub()
	if err != nil {
		dnsStubError = err.Error()
		return -1
	}
	return fd
}

// sendDNSStub hands the stub's listener (or none, for fd -1) to moat and
// closes the zygote's copy.
func sendDNSStub(fd int) error {
	if fd < 0 {
		return sendMessage(ctrlFD, dnsStubHello{Error: dnsStubError}, nil)
	}
	defer unix.Close(fd)
	return sendMessage(ctrlFD, dnsStubHello{}, []int{fd})
}

// receiveDNSStub takes the stub's listener from the zygote, if it sent
// one, and serves it, telling query each name asked.
func (z *zygote) receiveDNSStub(query func(string)) error {
	var hello dnsStubHello
	fds, err := recvMessage(int(z.ctrl.Fd()), &hello)
	if err != nil {
		return err
	}
	if len(fds) == 0 {
		return nil // the zygote said why in hello.Error; lookups fail at once all the same
	}
	if len(fds) != 1 {
		closeFDs(fds)
		return fmt.Errorf("got %d descriptors, want 1", len(fds))
	}
	f := os.NewFile(uintptr(fds[0]), "moat-dns-stub")
	ln, err := net.FileListener(f)
	f.Close()
	if err != nil {
		return err
	}
	z.dnsLn = ln
	go serveDNSStub(ln, query)
	return nil
}
