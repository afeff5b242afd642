package linux

import (
	"encoding/json"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/internal/bytestr"
)

// helperSpec is everything the helper needs to build the sandbox. It
// travels over the control socket (fd 3 of the helper), never in argv or the
// environment, so /proc/PID/cmdline and environ reveal nothing. The command
// itself follows later, as a commandSpec, when the caller starts it.
type helperSpec struct {
	WorkDir string `json:"workdir"`
	// Filesystem rules, by kind. Paths are absolute.
	ReadExec  []string `json:"read_exec"`
	ReadOnly  []string `json:"read_only"`
	ReadWrite []string `json:"read_write"`
	WriteExec []string `json:"write_exec"`
	// DevFiles are device files opened read-write with ioctl allowed.
	DevFiles []string `json:"dev_files"`

	NS           namespaces `json:"ns"`
	LandlockABI  int        `json:"landlock_abi"`
	DenyConnect  bool       `json:"deny_connect"`
	Scope        bool       `json:"scope"`
	AllowInetTCP bool       `json:"allow_inet_tcp"`
	Rlimits      []rlimit   `json:"rlimits"`
	Nice         int        `json:"nice"`
	IOPriority   int        `json:"io_priority"`
	// TraceStart, when not zero, is moat's clock (Unix nanoseconds) when it
	// started the zygote, which then reports how long each layer took.
	TraceStart int64 `json:"trace_start,omitempty"`
	// MemoryBytes bounds the memory of the whole sandbox, watched by its
	// init; zero means no bound.
	MemoryBytes int64 `json:"memory_bytes,omitempty"`
	// Grants are the caller's granted paths, which stay visible even where
	// they lie under a directory the sandbox masks (/tmp, /run).
	Grants []string `json:"grants"`
	// Identity holds, for each grant, the object checked when the sandbox
	// was configured; opening the path must find that same object.
	Identity map[string]fileID `json:"identity,omitempty"`
	// MaskFiles are hidden inside the mount namespace (secrets in /etc,
	// protected paths): a directory behind an empty read-only tmpfs, a
	// file behind /dev/null.
	MaskFiles []string `json:"mask_files"`
	// TempRead are entries of shared temp the sandbox may read. Anyone can
	// replace one with a link, so their rules never follow links.
	TempRead []string `json:"temp_read,omitempty"`
	// PrivateTmp maps the sandbox's temporary directories (/tmp, /var/tmp)
	// to the host directories of its own that are bound there, writable
	// and never executable, in place of the host's shared ones. Set only
	// with a mount namespace; the targets are listed in ReadWrite too.
	PrivateTmp map[string]string `json:"private_tmp,omitempty"`
	// ListOnly are directories the sandbox may list but not read files in
	// (shared temp and the home, whose readable entries are chosen).
	ListOnly []string `json:"list_only,omitempty"`
	// Carve lists paths inside allowed trees that keep fewer rights than
	// the tree (protected paths keep none); see carve.
	Carve []carveRule `json:"carve,omitempty"`
	// ControlRO are control paths (.git/hooks, .git/config, .moat-*)
	// inside writable places, bound read-only over them.
	ControlRO []string `json:"control_ro,omitempty"`
	// ControlPins are the directories on the way to control paths, bound
	// onto themselves with the flags of the place that holds them.
	ControlPins []string `json:"control_pins,omitempty"`
	// DenyMasks are denied paths hidden in the mount namespace
	// (helper_fspolicy_linux.go).
	DenyMasks []denyMask `json:"deny_masks,omitempty"`
	// Virtual are read-only files that exist only in the mount namespace.
	Virtual []virtualFile `json:"virtual,omitempty"`
	// HideProc runs each command in a mount namespace of its own, a copy
	// of the sandbox's without /proc.
	HideProc bool `json:"hide_proc,omitempty"`
	// ProxyPort, when set, is the policy proxy's port: inside the network
	// namespace the zygote listens on 127.0.0.1 there and passes the
	// listener to moat; without one, moat listens on the host's loopback
	// and Landlock allows connecting to that port only.
	ProxyPort int `json:"proxy_port,omitempty"`
	// DenyTCPPorts are the TCP ports no command may connect to or bind,
	// on any address, on the host's network stack (host network, or
	// DenyConnect, where connect is limited already but bind is not): the
	// zygote builds a Landlock layer of its own for them (buildPortDeny).
	// Empty (also the zero value) denies none this way; with a network
	// namespace the host sets none, as every port of the host is out of
	// reach and a bind lands in the sandbox's own namespace.
	DenyTCPPorts []uint16 `json:"deny_tcp_ports,omitempty"`
	// Permissive builds the root from every host top-level directory,
	// writable and executable, instead of the allow-list.
	Permissive bool `json:"permissive,omitempty"`
	// SuperviseSockets runs every command under the socket guard
	// (helper_sockguard_linux.go): connect and sends that name an address are
	// carried out by the zygote, which lets a path Unix socket be reached
	// only if the sandbox bound it or it is one of SocketGrants.
	SuperviseSockets bool `json:"supervise_sockets,omitempty"`
	// SocketGrants identify the host socket files the user allowed.
	SocketGrants []fileID `json:"socket_grants,omitempty"`
}

// commandSpec is the command to run, sent with its descriptors: 0, 1, 2,
// then the ExtraFiles.
type commandSpec struct {
	// OpenPTY asks instead for a new pseudo-terminal in the sandbox's own
	// devpts; the reply carries its master and slave.
	OpenPTY bool `json:"open_pty,omitempty"`

	Path  string   `json:"path"`
	Args  []string `json:"args"`
	Env   []string `json:"env"`
	Dir   string   `json:"dir"`
	Files int      `json:"files"`
	// Pty makes fd 0 the controlling terminal of the command.
	Pty bool `json:"pty,omitempty"`
	// TraceStart, when not zero, is the parent's clock (Unix nanoseconds)
	// when it sent the command.
	TraceStart int64 `json:"trace_start,omitempty"`
	// Refusals asks instead for what the supervisor recorded as refused
	// since the last such request; the reply carries it in Refused.
	Refusals bool `json:"refusals,omitempty"`
}

type namespaces struct {
	User, Mount, PID, Net, IPC, UTS, Cgroup bool
}

type rlimit struct {
	Resource int    `json:"resource"`
	Value    uint64 `json:"value"`
	// Hard, when not zero, is a hard limit above Value (the soft one).
	Hard uint64 `json:"hard,omitempty"`
}

// maxMessage bounds one message on the control socket (a SOCK_SEQPACKET
// socket, so each message arrives whole). It stays under the default socket
// buffer; a policy with so many grants that it does not fit is refused.
const maxMessage = 160 << 10

// maxFiles bounds the descriptors sent with a command.
const maxFiles = 250

// sendMessage sends v as one JSON message, with files attached.
// Strings that are not valid UTF-8 travel escaped (internal/bytestr).
func sendMessage(sock int, v any, files []int) error {
	b, err := json.Marshal(bytestr.Out(v))
	if err != nil {
		return err
	}
	if len(b) > maxMessage {
		return fmt.Errorf("sandbox description is %d bytes, over the %d-byte limit (too many grants?)", len(b), maxMessage)
	}
	var oob []byte
	if len(files) > 0 {
		oob = unix.UnixRights(files...)
	}
	if err := unix.Sendmsg(sock, b, oob, nil, 0); err != nil {
		return fmt.Errorf("sending to helper: %w", err)
	}
	return nil
}

// errClosed is a control socket closed by the other side.
var errClosed = errors.New("control socket closed")

// recvMessage receives one message into v, with the descriptors attached to
// it (close-on-exec).
func recvMessage(sock int, v any) ([]int, error) {
	buf := make([]byte, maxMessage+1)
	oob := make([]byte, unix.CmsgSpace(maxFiles*4))
	for {
		n, oobn, _, _, err := unix.Recvmsg(sock, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 && oobn == 0 {
			return nil, errClosed
		}
		fds, err := parseRights(oob[:oobn])
		if err != nil {
			return nil, err
		}
		if n > maxMessage {
			closeFDs(fds)
			return nil, fmt.Errorf("message of %d bytes is too large", n)
		}
		if err := json.Unmarshal(buf[:n], v); err != nil {
			closeFDs(fds)
			return nil, fmt.Errorf("decoding message: %w", err)
		}
		bytestr.In(v)
		return fds, nil
	}
}

func parseRights(oob []byte) ([]int, error) {
	if len(oob) == 0 {
		return nil, nil
	}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, fmt.Errorf("control message: %w", err)
	}
	var fds []int
	for i := range msgs {
		got, err := unix.ParseUnixRights(&msgs[i])
		if err != nil {
			closeFDs(fds)
			return nil, fmt.Errorf("control message: %w", err)
		}
		fds = append(fds, got...)
	}
	return fds, nil
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// status is the one line a helper reports on its status descriptor once
// it is set up.
type status struct {
	// Ready says the sandbox is built.
	Ready bool `json:"ready,omitempty"`
	// Error and Code report a failure; Namespaces marks one in setting up
	// the namespaces, which moat answers by running without them.
	Error      string `json:"error,omitempty"`
	Code       int    `json:"code,omitempty"`
	Namespaces bool   `json:"namespaces,omitempty"`
	// Redirected marks a grant that no longer leads where it was checked.
	Redirected bool `json:"redirected,omitempty"`
}

// reply answers a command: its pid in moat's PID namespace, or why it could
// not start (Code 126 or 127 as env(1) uses them, else 125).
type reply struct {
	Pid   int    `json:"pid,omitempty"`
	Error string `json:"error,omitempty"`
	Code  int    `json:"code,omitempty"`
	// Refused answers a commandSpec with Refusals set.
	Refused []refusedCall `json:"refused,omitempty"`
}

// proxyHello carries the proxy's listening socket from the zygote to
// moat, right after the ready status.
type proxyHello struct{}

// initRequest asks the sandbox's init to kill every other process of the
// sandbox (Sweep), or just how things stand; it answers with an initReply.
// Both travel as bytes (helper_init_linux.go), which the init reads and
// writes with raw calls.
type initRequest struct {
	Sweep bool
}

// initReply says whether the init killed the sandbox because its processes
// together used more memory than allowed, since the last request.
type initReply struct {
	MemoryExceeded bool
	// MemoryDetail says what the memory watch counted when it passed the
	// limit.
	MemoryDetail string
	// Refusals says the supervisor recorded new refusals, which moat then
	// collects from the zygote.
	Refusals bool
}
