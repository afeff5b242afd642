package linux

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// HelperEnv is the environment marker that selects the helper role. Its
// value names the role: "run" builds a sandbox and runs a command, "probe"
// only checks that the namespaces could be created.
const HelperEnv = "_MOAT_HELPER_ROLE"

// Fixed descriptors of the helper. The command's ExtraFiles follow them and
// are renumbered from 3 for the command.
const (
	specFD    = 3 // spec, then lifeline: EOF means the parent is gone
	statusFD  = 4 // status lines to the parent
	firstUser = 5
)

// forwardedSignals are passed from the helper to the command's process group.
var forwardedSignals = []os.Signal{
	unix.SIGHUP, unix.SIGINT, unix.SIGQUIT, unix.SIGTERM,
	unix.SIGUSR1, unix.SIGUSR2, unix.SIGWINCH, unix.SIGCONT,
}

// HelperMain runs the helper role and never returns. It must be called from
// a package init function, before anything else starts goroutines that
// matter: the calling thread is locked and becomes the thread that is
// restricted and forks the command.
func HelperMain(role string) {
	runtime.LockOSThread() // never unlocked: the restrictions live on this thread
	os.Unsetenv(HelperEnv)
	if role == "probe" {
		probeRole()
	}
	// The parent's death must end the sandbox. PDEATHSIG is one layer; the
	// lifeline pipe below is the other, and does not depend on which
	// parent thread forked us.
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0)
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)

	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, forwardedSignals...)

	statusFile := os.NewFile(statusFD, "status")
	h := &helper{status: statusFile, sigs: sigs}
	os.Exit(h.run(os.NewFile(specFD, "spec")))
}

type helper struct {
	trace  *tracer
	spec   *helperSpec
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

func (h *helper) run(specFile *os.File) int {
	spec, err := readSpec(specFile)
	if err != nil {
		return h.fail(125, err)
	}
	h.spec = spec
	h.trace = newTracer(spec.TraceStart)
	h.trace.mark("clone+exec+runtime")
	go h.watchLifeline(specFile)

	if err := h.setup(); err != nil {
		var ne *nsError
		if errors.As(err, &ne) {
			h.report(status{Error: err.Error(), Code: 125, Namespaces: true})
			return 125
		}
		return h.fail(125, err)
	}
	pid, err := h.startCommand()
	if err != nil {
		return h.fail(execFailureCode(err), fmt.Errorf("%s: %w", spec.Path, err))
	}
	h.pid = pid
	h.trace.mark("fork+exec command")
	h.trace.print()
	h.report(status{Pid: pid})
	go h.forwardSignals()
	return h.supervise()
}

// watchLifeline blocks on the spec pipe, which the parent keeps open for the
// life of the command. EOF means the parent has exited, so the sandbox must
// not outlive it.
func (h *helper) watchLifeline(f *os.File) {
	_, _ = io.Copy(io.Discard, f)
	h.killAll()
	os.Exit(137)
}

// setup applies every layer, in order, on the locked thread.
func (h *helper) setup() error {
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
	ruleset, err := buildRuleset(s)
	if err != nil {
		return err
	}
	defer ruleset.close()
	h.trace.mark("landlock-rules")
	if err := applyRlimits(s.Rlimits); err != nil {
		return err
	}
	if err := applyPriority(s.Nice, s.IOPriority); err != nil {
		return err
	}
	h.trace.mark("rlimits+priority")
	if err := dropCapabilities(); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	h.trace.mark("caps+nnp")
	if err := ruleset.restrictThread(); err != nil {
		return err
	}
	h.trace.mark("landlock-restrict")
	err = installSeccomp(s.AllowInetTCP)
	h.trace.mark("seccomp")
	return err
}

// startCommand forks the command from the locked, restricted thread, so it
// inherits the Landlock domain and the seccomp filter of this thread.
func (h *helper) startCommand() (int, error) {
	s := h.spec
	files := []uintptr{0, 1, 2}
	for i := 0; i < s.ExtraFiles; i++ {
		files = append(files, uintptr(firstUser+i))
	}
	attr := &syscall.ProcAttr{
		Dir:   s.Dir,
		Env:   s.Env,
		Files: files,
		Sys: &syscall.SysProcAttr{
			Setsid:    true,
			Setctty:   s.Pty,
			Ctty:      0,
			Pdeathsig: syscall.SIGKILL,
		},
	}
	return syscall.ForkExec(s.Path, s.Args, attr)
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
		switch {
		case ws.Signaled():
			sig := int(ws.Signal())
			h.report(status{Exited: true, Signal: sig})
			return 128 + sig
		default:
			code := ws.ExitStatus()
			h.report(status{Exited: true, Exit: code})
			return code
		}
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
