package linux

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Command is one command to run in the sandbox.
type Command struct {
	Path string
	Args []string
	Env  []string
	Dir  string
	// Pty makes Files[0] the controlling terminal.
	Pty bool
}

// Helper is one helper process: pre-forked and waiting, or running one
// command. Its exit status mirrors the command's.
type Helper struct {
	engine  *Engine
	gen     int
	proc    *exec.Cmd
	ctrl    *os.File // our end of the control socket; its EOF is the helper's lifeline
	statusR *os.File
	status  *bufio.Reader
	pidNS   bool
	// Pid is the command's pid inside the sandbox, once it runs.
	Pid int
}

// StartError is a failure to set up or start the command; Code is 125, or
// 126/127 for a command that cannot be executed or found.
type StartError struct {
	Code int
	Msg  string
	// Namespaces marks a failure to set up the namespaces.
	Namespaces bool
}

func (e *StartError) Error() string { return e.Msg }

// Outcome is how a command ended.
type Outcome struct {
	Exited bool // false: the helper died without reporting
	Exit   int
	Signal int
}

// maxIdle bounds the pre-forked helpers a busy sandbox keeps.
const maxIdle = 3

// Take returns a helper for the next command: a pre-forked one when the
// sandbox is warm, or a new one. A sandbox that runs one command never
// pre-forks; from the second command on it keeps helpers ready, more of them
// when commands keep finding none.
func (e *Engine) Take() (*Helper, error) {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, fmt.Errorf("sandbox closed")
	}
	var h *Helper
	var stale []*Helper
	for len(e.idle) > 0 && h == nil {
		c := e.idle[0]
		e.idle = e.idle[1:]
		if c.gen == e.gen {
			h = c
		} else {
			stale = append(stale, c)
		}
	}
	e.taken++
	warm := e.taken > 1
	if warm && h == nil && e.want < maxIdle {
		e.want++
	}
	e.mu.Unlock()
	for _, c := range stale {
		go c.Discard()
	}
	if warm {
		go e.refill()
	}
	if h != nil {
		return h, nil
	}
	return e.spawn()
}

// refill starts helpers until the sandbox has as many idle ones as it wants.
func (e *Engine) refill() {
	for {
		e.mu.Lock()
		need := !e.closed && len(e.idle) < e.want
		e.mu.Unlock()
		if !need {
			return
		}
		h, err := e.spawn()
		if err != nil {
			return
		}
		e.mu.Lock()
		if e.closed || h.gen != e.gen || len(e.idle) >= e.want {
			e.mu.Unlock()
			h.Discard()
			return
		}
		e.idle = append(e.idle, h)
		e.mu.Unlock()
	}
}

// spawn starts a helper and sends it the sandbox spec; it then builds the
// sandbox while the caller goes on.
func (e *Engine) spawn() (*Helper, error) {
	e.mu.Lock()
	spec := e.base
	gen := e.gen
	useNS := e.ns.User
	pidNS := e.ns.PID
	e.mu.Unlock()

	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socketpair: %w", err)
	}
	ctrl, child := os.NewFile(uintptr(fds[0]), "moat-ctrl"), os.NewFile(uintptr(fds[1]), "moat-ctrl")
	statusR, statusW, err := os.Pipe()
	if err != nil {
		ctrl.Close()
		child.Close()
		return nil, err
	}
	h := &Helper{engine: e, gen: gen, ctrl: ctrl, statusR: statusR, status: bufio.NewReader(statusR), pidNS: pidNS}
	proc := &exec.Cmd{
		Path:       "/proc/self/exe",
		Args:       []string{"moat-helper"},
		Env:        []string{HelperEnv + "=run"},
		ExtraFiles: []*os.File{child, statusW},
	}
	attr := &syscall.SysProcAttr{Setpgid: true}
	if useNS {
		attr = namespaceAttr()
	}
	if e.cg != nil && e.cg.V2FD() >= 0 {
		attr.UseCgroupFD = true
		attr.CgroupFD = e.cg.V2FD()
	}
	proc.SysProcAttr = attr
	h.proc = proc
	if os.Getenv(TraceEnv) == "1" {
		spec.TraceStart = time.Now().UnixNano()
	}
	err = startOnSpawner(proc)
	child.Close()
	statusW.Close()
	if err != nil {
		ctrl.Close()
		statusR.Close()
		return nil, &spawnError{err}
	}
	if e.cg != nil {
		if err := e.cg.Add(proc.Process.Pid); err != nil {
			h.Discard()
			return nil, fmt.Errorf("cgroup: %w", err)
		}
	}
	if err := sendMessage(int(ctrl.Fd()), &spec, nil); err != nil {
		h.Discard()
		return nil, err
	}
	return h, nil
}

// spawnError is a failure to start the helper process itself; with
// namespaces, the kernel refusing them shows up here.
type spawnError struct{ err error }

func (e *spawnError) Error() string { return "start helper: " + e.err.Error() }
func (e *spawnError) Unwrap() error { return e.err }

// Run waits until the helper has built the sandbox, then sends it the
// command with its descriptors (0, 1, 2, then the extra files) and waits
// until the command runs. The caller may close files afterwards.
func (h *Helper) Run(c *Command, files []*os.File) error {
	st, err := h.next()
	if err != nil {
		return &StartError{Code: 125, Msg: "helper exited before the sandbox was ready"}
	}
	if st.Error != "" {
		return &StartError{Code: st.Code, Msg: st.Error, Namespaces: st.Namespaces}
	}
	if !st.Ready {
		return &StartError{Code: 125, Msg: "helper protocol: expected ready"}
	}
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	spec := commandSpec{Path: c.Path, Args: c.Args, Env: c.Env, Dir: c.Dir, Files: len(fds), Pty: c.Pty}
	if os.Getenv(TraceEnv) == "1" {
		spec.TraceStart = time.Now().UnixNano()
	}
	if err := sendMessage(int(h.ctrl.Fd()), &spec, fds); err != nil {
		return &StartError{Code: 125, Msg: err.Error()}
	}
	if st, err = h.next(); err != nil {
		return &StartError{Code: 125, Msg: "helper exited before the command started"}
	}
	if st.Error != "" {
		return &StartError{Code: st.Code, Msg: st.Error, Namespaces: st.Namespaces}
	}
	h.Pid = st.Pid
	return nil
}

func (h *Helper) next() (status, error) {
	line, err := h.status.ReadBytes('\n')
	if err != nil {
		return status{}, err
	}
	var st status
	if err := json.Unmarshal(line, &st); err != nil {
		return status{}, err
	}
	return st, nil
}

// Process is the helper process: signals sent to it reach the command's
// process group; killing it ends the sandboxed tree.
func (h *Helper) Process() *os.Process { return h.proc.Process }

// Wait waits for the helper to exit and reports how the command ended.
func (h *Helper) Wait() (Outcome, *os.ProcessState) {
	_ = h.proc.Wait()
	var out Outcome
	for {
		st, err := h.next()
		if err != nil {
			break
		}
		if st.Exited {
			out = Outcome{Exited: true, Exit: st.Exit, Signal: st.Signal}
		}
	}
	h.ctrl.Close()
	h.statusR.Close()
	return out, h.proc.ProcessState
}

// Kill kills the command's whole process tree.
func (h *Helper) Kill() {
	if !h.pidNS && h.Pid > 0 {
		_ = syscall.Kill(-h.Pid, syscall.SIGKILL)
	}
	if h.proc.Process != nil {
		_ = h.proc.Process.Kill()
	}
}

// Discard ends a helper that will not run a command, and reaps it.
func (h *Helper) Discard() {
	h.ctrl.Close()
	h.Kill()
	h.Wait()
}
