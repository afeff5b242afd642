package linux

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
)

// helperSpec is everything the helper needs to build the sandbox and start
// the command. It travels over a pipe (fd 3 of the helper), never in argv or
// the environment, so /proc/PID/cmdline and environ reveal nothing.
type helperSpec struct {
	Path       string   `json:"path"`
	Args       []string `json:"args"`
	Env        []string `json:"env"`
	Dir        string   `json:"dir"`
	ExtraFiles int      `json:"extra_files"`
	// Pty makes fd 0 the controlling terminal of the command.
	Pty bool `json:"pty,omitempty"`

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
	NoexecMounts bool       `json:"noexec_mounts"`
	// TraceStart, when not zero, is the parent's clock (Unix nanoseconds)
	// when it started the helper; the helper then prints how long each
	// layer took, for bench/startup.sh.
	TraceStart int64 `json:"trace_start,omitempty"`
	// MaskFiles are hidden inside the mount namespace (secrets in /etc).
	MaskFiles []string `json:"mask_files"`
}

type namespaces struct {
	User, Mount, PID, Net, IPC, UTS, Cgroup bool
}

func (n namespaces) any() bool { return n.User || n.Mount || n.PID || n.Net || n.IPC || n.UTS }

type rlimit struct {
	Resource int    `json:"resource"`
	Value    uint64 `json:"value"`
}

// maxSpecBytes bounds what the helper reads, so a broken parent cannot make
// it allocate without limit.
const maxSpecBytes = 16 << 20

// writeSpec sends s length-prefixed, so the pipe can stay open afterwards as
// a lifeline whose EOF tells the helper that its parent is gone.
func writeSpec(w io.Writer, s *helperSpec) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(len(b)))
	if _, err := w.Write(append(n[:], b...)); err != nil {
		return fmt.Errorf("sending spec to helper: %w", err)
	}
	return nil
}

func readSpec(r io.Reader) (*helperSpec, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, fmt.Errorf("reading spec: %w", err)
	}
	size := binary.LittleEndian.Uint32(n[:])
	if size > maxSpecBytes {
		return nil, fmt.Errorf("reading spec: %d bytes is too large", size)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, fmt.Errorf("reading spec: %w", err)
	}
	var s helperSpec
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("decoding spec: %w", err)
	}
	return &s, nil
}

// status is one line the helper reports to its parent on fd 4.
type status struct {
	// Pid is the command's pid in the helper's PID namespace; set once the
	// command has started.
	Pid int `json:"pid,omitempty"`
	// Error and Code report a failure to set up or start the command.
	Error string `json:"error,omitempty"`
	Code  int    `json:"code,omitempty"`
	// Namespaces marks an Error in setting up the namespaces, which the
	// parent answers by retrying without them.
	Namespaces bool `json:"namespaces,omitempty"`
	// Exited and Signal report how the command ended.
	Exited bool `json:"exited,omitempty"`
	Exit   int  `json:"exit,omitempty"`
	Signal int  `json:"signal,omitempty"`
}
