package linux

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/moat-sandbox/moat/internal/seccomp"
	"golang.org/x/sys/unix"
)

// HelperEnv is the environment marker that selects the helper role. Its
// value names the role: "run" builds a sandbox and runs a command, "probe"
// only checks that the namespaces could be created.
const HelperEnv = "_MOAT_HELPER_ROLE"

// Fixed descriptors of the helper.
const (
	ctrlFD   = 3 // control socket: sandbox spec, then the command with its files; EOF means the parent is gone
	statusFD = 4 // status lines to the parent
)

// forwardedSignals are passed from the helper to the command's process group.
var forwardedSignals = []os.Signal{
	unix.SIGHUP, unix.SIGINT, unix.SIGQUIT, unix.SIGTERM,
	unix.SIGUSR1, unix.SIGUSR2, unix.SIGWINCH, unix.SIGCONT,
}

// HelperMain runs the helper role and never returns. It must be called from
// a package init function: the calling thread, the main thread, is locked
// and becomes the thread that is restricted and forks the command.
func HelperMain(role string) {
	runtime.LockOSThread() // never unlocked: the restrictions live on this thread
	os.Unsetenv(HelperEnv)
	if role == "probe" {
		probeRole()
	}
	// The parent's death must end the sandbox. PDEATHSIG is one layer; the
	// control socket's EOF is the other, and does not depend on which
	// parent thread forked us.
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0)
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)

	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, forwardedSignals...)

	h := &helper{status: os.NewFile(statusFD, "status"), sigs: sigs}
	os.Exit(h.run())
}

type helper struct {
	trace  *tracer
	spec   *helperSpec
	rules  *ruleset
	filter []unix.SockFilter
	status *os.File
	sigs   chan os.Signal
	pid    int
}

// nsError is a failure to set up the namespaces.
type nsError struct{ err error }

func (e *nsError) Error() string { return e.err.Error() }

func (h *helper) report(s status) {
	b, _ := json.Marshal(s)
	_, _ = h.status.Write(append(b, '\n'))
}

func (h *helper) fail(code int, err error) int {
	h.report(status{Error: err.Error(), Code: code})
	return code
}

func (h *helper) run() int {
	var spec helperSpec
	if _, err := recvMessage(ctrlFD, &spec); err != nil {
		return h.fail(125, fmt.Errorf("reading sandbox spec: %w", err))
	}
	h.spec = &spec
	h.trace = newTracer(spec.TraceStart)
	h.trace.mark("clone+exec+runtime")
	if err := h.prepare(); err != nil {
		var ne *nsError
		if errors.As(err, &ne) {
			h.report(status{Error: err.Error(), Code: 125, Namespaces: true})
			return 125
		}
		return h.fail(125, err)
	}
	defer h.rules.close()
	h.report(status{Ready: true})

	var cmd commandSpec
	files, err := recvMessage(ctrlFD, &cmd)
	if errors.Is(err, errClosed) {
		return 0 // an idle helper that was not needed
	}
	if err != nil {
		return h.fail(125, fmt.Errorf("reading command: %w", err))
	}
	if len(files) != cmd.Files || len(files) < 3 {
		return h.fail(125, fmt.Errorf("command came with %d descriptors, want %d (at least 3)", len(files), cmd.Files))
	}
	sandboxTrace := h.trace.line("sandbox")
	if cmd.TraceStart != 0 {
		h.trace = newTracer(cmd.TraceStart)
	}
	go h.watchLifeline()
	if err := h.restrict(files); err != nil {
		return h.fail(125, err)
	}
	pid, err := h.startCommand(&cmd, files)
	if err != nil {
		return h.fail(execFailureCode(err), fmt.Errorf("%s: %w", cmd.Path, err))
	}
	h.pid = pid
	h.trace.mark("fork+exec command")
	if cmd.TraceStart != 0 {
		unix.Write(files[2], []byte(sandboxTrace+h.trace.line("command")))
	}
	closeFDs(files)
	h.report(status{Pid: pid})
	go h.forwardSignals()
	return h.supervise()
}

// watchLifeline blocks on the control socket, which the parent keeps open
// for the life of the command. EOF means the parent has exited (or killed
// the command), so the sandbox must not outlive it.
func (h *helper) watchLifeline() {
	var buf [1]byte
	for {
		n, err := unix.Read(ctrlFD, buf[:])
		if err == unix.EINTR {
			continue
		}
		if n <= 0 {
			break
		}
	}
	h.killAll()
	os.Exit(137)
}

// prepare builds everything that does not depend on the command, so a
// pre-forked helper is ready before the command is known: namespaces,
// mounts, the Landlock ruleset, rlimits.
func (h *helper) prepare() error {
	s := h.spec
	if s.NS.Mount {
		if err := setupMounts(s); err != nil {
			return &nsError{fmt.Errorf("mount namespace: %w", err)}
		}
		h.trace.mark("mounts")
	}
	if s.NS.Net {
		if err := bringUpLoopback(); err != nil {
			return &nsError{fmt.Errorf("network namespace: %w", err)}
		}
	}
	if s.NS.UTS {
		if err := unix.Sethostname([]byte("moat")); err != nil {
			return &nsError{fmt.Errorf("sethostname: %w", err)}
		}
	}
	if !s.NS.PID {
		// Orphaned descendants come back to us, so they can be killed
		// when the command ends.
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("subreaper: %w", err)
		}
	}
	h.trace.mark("netns+uts")
	rules, err := buildRuleset(s)
	if err != nil {
		return err
	}
	h.rules = rules
	if h.filter, err = buildSeccomp(s.AllowInetTCP); err != nil {
		return err
	}
	h.trace.mark("landlock-rules+seccomp-build")
	if err := applyRlimits(s.Rlimits); err != nil {
		return err
	}
	h.trace.mark("rlimits")
	return nil
}

// restrict applies the per-thread layers, in order, on the locked thread:
// priority, capabilities, no_new_privs, Landlock, seccomp.
func (h *helper) restrict(files []int) error {
	s := h.spec
	h.trace.mark("command received")
	if err := h.rules.addTerminals(files[:3]); err != nil {
		return err
	}
	if err := applyPriority(s.Nice, s.IOPriority); err != nil {
		return err
	}
	if err := dropCapabilities(); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	h.trace.mark("priority+caps+nnp")
	if err := h.rules.restrictThread(); err != nil {
		return err
	}
	h.trace.mark("landlock-restrict")
	err := seccomp.Install(h.filter)
	h.trace.mark("seccomp")
	return err
}

// startCommand forks the command from the locked, restricted thread, so it
// inherits the Landlock domain and the seccomp filter of this thread.
func (h *helper) startCommand(cmd *commandSpec, files []int) (int, error) {
	fds := make([]uintptr, len(files))
	for i, fd := range files {
		fds[i] = uintptr(fd)
	}
	attr := &syscall.ProcAttr{
		Dir:   cmd.Dir,
		Env:   cmd.Env,
		Files: fds,
		Sys: &syscall.SysProcAttr{
			Setsid:    true,
			Setctty:   cmd.Pty,
			Ctty:      0,
			Pdeathsig: syscall.SIGKILL,
		},
	}
	return syscall.ForkExec(cmd.Path, cmd.Args, attr)
}

// execFailureCode maps an exec error to the exit status env(1) uses.
func execFailureCode(err error) int {
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		return 127
	}
	return 126
}

func (h *helper) forwardSignals() {
	for sig := range h.sigs {
		_ = unix.Kill(-h.pid, sig.(syscall.Signal))
	}
}

// supervise reaps every child until the command ends, then ends the rest of
// the sandbox and reports how the command ended.
func (h *helper) supervise() int {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			h.killAll()
			return h.fail(125, fmt.Errorf("wait: %w", err))
		}
		if pid != h.pid {
			continue
		}
		h.killAll()
		if ws.Signaled() {
			sig := int(ws.Signal())
			h.report(status{Exited: true, Signal: sig})
			return 128 + sig
		}
		code := ws.ExitStatus()
		h.report(status{Exited: true, Exit: code})
		return code
	}
}

// killAll ends every process of the sandbox. In a PID namespace the helper's
// own exit does that (it is PID 1); otherwise it kills the command's process
// group and every descendant that was reparented to this subreaper.
func (h *helper) killAll() {
	if h.spec != nil && h.spec.NS.PID {
		return
	}
	if h.pid > 0 {
		_ = unix.Kill(-h.pid, unix.SIGKILL)
	}
	killDescendants(os.Getpid())
}
