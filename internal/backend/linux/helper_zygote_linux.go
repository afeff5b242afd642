package linux

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// A zygote holds one sandbox. It is built once, when the sandbox's first
// command starts: the namespaces (user, mount, network, IPC, UTS, cgroup)
// with the sandbox's mounts, a PID namespace whose PID 1 is the sandbox's
// init, the Landlock ruleset, the seccomp filter and the rlimits.
//
// For each command it takes a fresh OS thread, joins the sandbox's PID
// namespace, drops that thread's capabilities, sets no_new_privs, enforces
// Landlock and seccomp on it, and forks the command from it with
// CLONE_PARENT. The command thus inherits every restriction, and its parent
// is moat's own process, which waits for it like any child: Cmd.Process is
// the command itself and its ProcessState is real. The thread then ends, so
// no restriction ever leaks into the zygote. A warm sandbox pays for one
// fork and exec per command, not for a new helper process and namespaces.
type zygoteProc struct {
	spec     helperSpec
	rules    *ruleset
	portDeny *ruleset         // the layer that denies TCP connect to given ports, or nil
	steady   chan<- steadyJob // the thread that forks commands under portDeny, or nil
	plan     []llRule         // the Landlock rules, planned once
	proxyFD  int              // the proxy's listener in the network namespace, or -1
	dnsFD    int              // the DNS stub's listener in the network namespace, or -1
	filter   []unix.SockFilter
	pidnsFD  int      // the sandbox's PID namespace, or -1 without namespaces
	initPid  int      // the sandbox's init, our child, reaped before we exit; 0 without one
	ipcFD    int      // the sandbox's limited IPC namespace, or -1 (see newLimitedIPC)
	limits   []rlimit // the rlimits of each command, set in its child before the exec
	trace    *tracer
	built    string // the trace of building the sandbox, printed with the first traced command
	mu       sync.Mutex
	started  []int // process groups of the commands, for cleanup without a PID namespace
	cleaning sync.Once
	guard    *sockGuard   // the socket guard, when the spec asks for it
	gate     *commandGate // wakes the memory watch for each command, or nil without one
}

// zygoteMain is the zygote role.
func zygoteMain() int {
	z := &zygoteProc{pidnsFD: -1, proxyFD: -1, dnsFD: -1, ipcFD: -1}
	// Everything from 3 up, our own control socket and status pipe
	// included, is close-on-exec: a command gets only what it is given.
	if err := closeStrayFDs(ctrlFD); err != nil {
		writeStatus(statusFD, status{Error: fmt.Sprintf("close inherited descriptors: %v", err), Code: 125})
		return 125
	}
	unix.Close(zygoteFDTable - 1) // only there to size the table (bigTable)
	var spec helperSpec
	ready := time.Now() // a zygote spawned ahead then waits for its spec
	fds, err := recvMessage(ctrlFD, &spec)
	if err != nil {
		writeStatus(statusFD, status{Error: fmt.Sprintf("reading sandbox spec: %v", err), Code: 125})
		return 125
	}
	z.spec = spec
	z.trace = newTracer(spec.TraceStart)
	z.trace.markAt("clone+exec+runtime", ready)
	z.trace.mark("spec")
	if err := z.build(fds); err != nil {
		var ne *nsError
		var re *redirectedError
		redirected := errors.As(err, &re)
		writeStatus(statusFD, status{Error: err.Error(), Code: 125, Redirected: redirected,
			Namespaces: errors.As(err, &ne) && !redirected})
		z.reapInit() // moat closes the init's socket once it has read the status
		return 125
	}
	z.built = z.trace.line("sandbox")
	writeStatus(statusFD, status{Ready: true})
	unix.Close(statusFD)
	if z.proxyFD >= 0 {
		err := sendMessage(ctrlFD, proxyHello{}, []int{z.proxyFD})
		unix.Close(z.proxyFD)
		if err != nil {
			z.cleanup()
			z.reapInit()
			return 125
		}
	}
	if z.spec.NS.Net && sendDNSStub(z.dnsFD) != nil {
		z.cleanup()
		z.reapInit()
		return 125
	}
	// Building the sandbox left garbage (the spec, the plan, the mount
	// tree's bookkeeping) that an idle sandbox would keep resident: once
	// the first commands have started, give it back.
	time.AfterFunc(idleTrimDelay, debug.FreeOSMemory)
	return z.serve()
}

// idleTrimDelay is how long after start-up the zygote returns its unused
// memory to the host, off the path of the first command.
const idleTrimDelay = 300 * time.Millisecond

// nsError is a failure to set up the namespaces.
type nsError struct{ err error }

func (e *nsError) Error() string { return e.err.Error() }
func (e *nsError) Unwrap() error { return e.err }

// build makes the sandbox. fds holds the init's control socket when the
// sandbox has namespaces.
func (z *zygoteProc) build(fds []int) error {
	s := &z.spec
	// moat's death must end the sandbox: the control socket's EOF and the
	// parent-death signal both lead to cleanup.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, unix.SIGUSR1)
	go func() { <-sigs; z.cleanup(); os.Exit(137) }()
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGUSR1), 0, 0, 0); err != nil {
		return fmt.Errorf("pdeathsig: %w", err)
	}
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	if s.NS.User {
		if len(fds) != 1 {
			return fmt.Errorf("sandbox spec came with %d descriptors, want 1", len(fds))
		}
		if err := z.buildNamespaces(fds[0]); err != nil {
			return err
		}
	}
	z.plan = planRules(s, osReadDir)
	rules, err := buildRuleset(s, z.plan)
	if err != nil {
		return err
	}
	z.rules = rules
	if z.portDeny, err = buildPortDeny(s); err != nil { // helper_portdeny_linux.go
		return err
	}
	if s.SuperviseSockets && z.guard == nil {
		return fmt.Errorf("socket guard: needs the sandbox's namespaces")
	}
	if z.guard != nil {
		z.guard.inetTCP = s.AllowInetTCP
	}
	if z.filter, err = buildSeccomp(s.AllowInetTCP, z.guard != nil); err != nil {
		return err
	}
	z.trace.mark("landlock-rules+seccomp-build")
	// The limits bind each command from its fork on (forkExecLimited),
	// never the zygote, which works for the sandbox and must not run out
	// of descriptors, threads or CPU time because of it. Checked here, so
	// that a limit the zygote could not set fails the sandbox, not each
	// command.
	if err := checkRlimits(s.Rlimits); err != nil {
		return err
	}
	z.limits = append([]rlimit{{Resource: unix.RLIMIT_CORE, Value: 0}}, s.Rlimits...)
	if z.portDeny != nil && z.guard == nil && !s.HideProc {
		z.steady = z.startSteady() // helper_portdeny_linux.go
	}
	return applyRlimits(nil) // the zygote's own core limit: 0
}

func (z *zygoteProc) buildNamespaces(initSock int) error {
	s := &z.spec
	if s.MemoryBytes > 0 {
		// Before the PID namespace: the holder must not become its PID 1.
		// This thread, and so the init, is in the limited IPC namespace.
		fd, err := newLimitedIPC(s.MemoryBytes)
		if err != nil {
			return err
		}
		z.ipcFD = fd
		z.trace.mark("ipcns")
	}
	// A new PID namespace for what this thread forks from now on; its first
	// child, the init, becomes its PID 1 and boots while we build the rest.
	if err := unix.Unshare(unix.CLONE_NEWPID); err != nil {
		return &nsError{fmt.Errorf("unshare pid namespace: %w", err)}
	}
	init, err := forkInit(initSock)
	unix.Close(initSock) // the init has it; if the init dies, moat sees EOF
	if err != nil {
		return &nsError{err}
	}
	z.initPid = init.pid
	if z.pidnsFD, err = init.namespace(); err != nil {
		return &nsError{err}
	}
	z.trace.mark("pidns+init-fork")
	if s.SuperviseSockets {
		// Before the pivot: the guard keeps the host's /proc.
		if z.guard, err = openSockGuard(s.SocketGrants); err != nil {
			return err
		}
		z.trace.mark("sockguard")
	}
	// The network namespace before the mounts: the memory watch must
	// know how many TCP sockets in it are moat's own listeners. Without
	// one (the host's network, chosen explicitly) there is nothing to
	// bring up and no stub or proxy to listen for.
	if s.NS.Net {
		if err := bringUpLoopback(); err != nil {
			return &nsError{fmt.Errorf("network namespace: %w", err)}
		}
	}
	if err := unix.Sethostname([]byte("moat")); err != nil {
		return &nsError{fmt.Errorf("sethostname: %w", err)}
	}
	if s.NS.Net {
		z.dnsFD = openDNSStub()
	}
	if s.ProxyPort > 0 && s.NS.Net {
		if z.proxyFD, err = listenLoopback(s.ProxyPort); err != nil {
			return fmt.Errorf("proxy listener: %w", err)
		}
	}
	z.trace.mark("netns+uts")
	ownTCP4 := 0 // both listeners are IPv4
	for _, fd := range []int{z.dnsFD, z.proxyFD} {
		if fd >= 0 {
			ownTCP4++
		}
	}
	// The host's /proc, for the memory watch: the sandbox's does not show
	// the zygote, so /proc/thread-self would not resolve there.
	hostProc := -1
	if s.MemoryBytes > 0 {
		if hostProc, err = unix.Open("/proc", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
			return fmt.Errorf("open /proc: %w", err)
		}
	}
	quiet, cpus := !ticklessCPUs(), possibleCPUs() // the host's /sys, before the pivot
	initCh := -1
	err = setupMounts(s, func() error {
		var err error
		initCh, err = init.finish()
		return err
	})
	if err != nil {
		err = fmt.Errorf("mount namespace: %w", err)
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
			// The host refuses mounts in user namespaces.
			return &nsError{err}
		}
		// Anything else (a path that changed while the sandbox was being
		// built) fails this sandbox, without giving up namespaces.
		return err
	}
	if z.guard != nil {
		z.guard.notify = initCh
	}
	if s.MemoryBytes > 0 {
		z.gate = newCommandGate()
		w := &memoryWatch{limit: s.MemoryBytes, ownTCP4: ownTCP4, ipcFD: z.ipcFD, initCh: initCh, proc: hostProc,
			nice: s.Nice, ioprio: s.IOPriority, guard: z.guard, gate: z.gate, quiet: quiet, cpus: cpus}
		w.openShm("/dev/shm")
		go w.run() // helper_memwatch_linux.go
	}
	z.trace.mark("mounts+init")
	return nil
}

// serve runs commands until moat closes the control socket.
func (z *zygoteProc) serve() int {
	for {
		var cmd commandSpec
		files, err := recvMessage(ctrlFD, &cmd)
		if err != nil {
			z.cleanup()
			z.reapInit()
			return 0
		}
		var r reply
		var attach []int
		if cmd.OpenPTY {
			r, attach = openPTY()
		} else if cmd.Refusals {
			if z.guard != nil {
				r.Refused = z.guard.drain()
			}
		} else {
			r = z.runCommand(&cmd, files)
		}
		closeFDs(files)
		err = sendMessage(ctrlFD, &r, attach)
		closeFDs(attach)
		if err != nil {
			z.cleanup()
			z.reapInit()
			return 0
		}
	}
}

// runCommand forks the command from a new thread that carries every
// restriction and ends with it.
func (z *zygoteProc) runCommand(cmd *commandSpec, files []int) reply {
	if len(files) != cmd.Files || len(files) < 3 {
		return reply{Error: fmt.Sprintf("command came with %d descriptors, want %d (at least 3)", len(files), cmd.Files), Code: 125}
	}
	if z.gate != nil {
		z.gate.commandStarting() // before the fork: the memory watch may sleep
	}
	done := make(chan reply)
	if z.steadyFits(files) {
		z.steady <- steadyJob{cmd: cmd, files: files, done: done} // helper_portdeny_linux.go
	} else {
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
			done <- z.forkCommand(cmd, files)
		}()
	}
	r := <-done
	if r.Pid > 0 && z.pidnsFD < 0 {
		z.mu.Lock()
		z.started = append(z.started, r.Pid)
		z.mu.Unlock()
	}
	return r
}

func (z *zygoteProc) forkCommand(cmd *commandSpec, files []int) reply {
	t := newTracer(cmd.TraceStart)
	t.mark("command received")
	fail := func(err error) reply { return reply{Error: err.Error(), Code: 125} }
	rules := z.rules
	if terminals := terminalFDs(files[:3]); len(terminals) > 0 {
		// The command's own terminal needs a rule of its own, in a
		// ruleset of its own.
		rs, err := buildRuleset(&z.spec, z.plan)
		if err != nil {
			return fail(err)
		}
		defer rs.close()
		for _, fd := range terminals {
			if err := rs.addFD(fd, fsDevice); err != nil {
				return fail(err)
			}
		}
		rules = rs
	}
	if err := z.restrictThread(rules); err != nil {
		return fail(err)
	}
	cpath, err := unix.BytePtrFromString(cmd.Path)
	if err != nil {
		return reply{Error: fmt.Sprintf("%s: %v", cmd.Path, err), Code: execFailureCode(err)}
	}
	if z.guard != nil {
		// The command's own exec must not wait for the supervisor: this
		// thread waits in vfork, not in a syscall the Go runtime knows
		// of, so a garbage collection starting meanwhile would wait for
		// it while the supervisor's goroutine waits for the collection.
		// That exec, named by this very pointer, passes the filter.
		filter, err := passExec(z.filter, cpath)
		if err != nil {
			return fail(err)
		}
		listener, err := installFilterListener(filter)
		if err != nil {
			return fail(err)
		}
		// Served from now on; it ends when no process uses the filter,
		// this thread included, so also when the fork fails.
		go z.guard.serve(listener)
	} else if err := installFilter(z.filter); err != nil {
		return fail(err)
	}
	t.mark("restrict thread")
	return z.spawn(cmd, files, cpath, t)
}

// restrictThread puts the calling thread in the sandbox's PID and IPC
// namespaces and under every restriction but the seccomp filter: rules
// (the filesystem's) and the port deny layer, no capabilities,
// no_new_privs, the sandbox's priority.
func (z *zygoteProc) restrictThread(rules *ruleset) error {
	if z.pidnsFD >= 0 {
		if err := unix.Setns(z.pidnsFD, unix.CLONE_NEWPID); err != nil {
			return fmt.Errorf("join pid namespace: %w", err)
		}
	}
	if z.ipcFD >= 0 {
		if err := unix.Setns(z.ipcFD, unix.CLONE_NEWIPC); err != nil {
			return fmt.Errorf("join ipc namespace: %w", err)
		}
	}
	if err := z.hideProc(); err != nil { // helper_fspolicy_linux.go
		return err
	}
	if err := applyPriority(z.spec.Nice, z.spec.IOPriority); err != nil {
		return err
	}
	if err := dropCapabilities(); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if err := rules.restrictThread(); err != nil {
		return err
	}
	if z.portDeny != nil {
		if err := z.portDeny.restrictThread(); err != nil {
			return err
		}
	}
	return nil
}

// spawn forks and execs the command from the calling, restricted thread.
func (z *zygoteProc) spawn(cmd *commandSpec, files []int, cpath *byte, t *tracer) reply {
	pid, err := forkExecLimited(&execStart{ // helper_exec_linux.go
		path: cmd.Path, cpath: cpath, argv: cmd.Args, env: cmd.Env, dir: cmd.Dir, files: files,
		setsid: true, ctty: cmd.Pty, limits: z.limits,
	})
	if err != nil {
		return reply{Error: fmt.Sprintf("%s: %v", cmd.Path, err), Code: execFailureCode(err)}
	}
	runtime.KeepAlive(cpath)
	t.mark("fork+exec")
	if cmd.TraceStart != 0 {
		_, _ = unix.Write(files[2], []byte(z.built+t.line("command")))
		z.built = ""
	}
	return reply{Pid: pid}
}

// terminalFDs returns the standard descriptors that are character devices
// other than the harmless ones every sandbox may use (a terminal, usually),
// so reopening them through /dev/stdout or /proc/self/fd keeps working.
func terminalFDs(fds []int) []int {
	var out []int
	for _, fd := range fds {
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR {
			continue
		}
		// /dev/null, zero, full, random, urandom: major 1.
		if unix.Major(st.Rdev) == 1 {
			continue
		}
		out = append(out, fd)
	}
	return out
}

// execFailureCode maps an exec error to the exit status env(1) uses.
func execFailureCode(err error) int {
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		return 127
	}
	return 126
}

// cleanup ends every command the zygote started, when moat has gone. With a
// PID namespace the init does that; without one, each command's process
// group is killed.
func (z *zygoteProc) cleanup() {
	z.cleaning.Do(func() {
		z.mu.Lock()
		defer z.mu.Unlock()
		for _, pgid := range z.started {
			_ = unix.Kill(-pgid, unix.SIGKILL)
		}
	})
}

// reapInit waits for the sandbox's init, our child, so that no zombie is
// left behind: under a host that is PID 1 of a container and reaps only its
// own children, an init orphaned by our exit would stay a zombie forever.
// It is killed first: by now moat has closed the sandbox.
func (z *zygoteProc) reapInit() {
	if z.initPid <= 0 {
		return
	}
	pid := z.initPid
	z.initPid = 0
	// Everything ends now: the kill spares the init's own exit path and
	// the polling of a gentle wait, which start-up benchmarks pay for.
	_ = unix.Kill(pid, unix.SIGKILL)
	reapKilled(pid)
}

// reapKilled waits for child pid, already sent SIGKILL, without polling.
func reapKilled(pid int) {
	for {
		var ws unix.WaitStatus
		if _, err := unix.Wait4(pid, &ws, 0, nil); err != unix.EINTR {
			return
		}
	}
}

// reapChild waits for child pid, killing it after grace.
func reapChild(pid int, grace time.Duration) {
	deadline := time.Now().Add(grace)
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		if got == pid || (err != nil && err != unix.EINTR) {
			return
		}
		if time.Now().After(deadline) {
			_ = unix.Kill(pid, unix.SIGKILL)
			for {
				if _, err := unix.Wait4(pid, &ws, 0, nil); err != unix.EINTR {
					return
				}
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// openPTY opens a pseudo-terminal pair in the sandbox's /dev/pts, so that a
// shell given its slave finds its terminal by name (tty, ssh, sudo do).
func openPTY() (reply, []int) {
	fail := func(err error) (reply, []int) { return reply{Error: "open pty: " + err.Error(), Code: 125}, nil }
	master, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fail(err)
	}
	if err := unix.IoctlSetPointerInt(master, unix.TIOCSPTLCK, 0); err != nil {
		unix.Close(master)
		return fail(err)
	}
	n, err := unix.IoctlGetInt(master, unix.TIOCGPTN)
	if err != nil {
		unix.Close(master)
		return fail(err)
	}
	slave, err := unix.Open(fmt.Sprintf("/dev/pts/%d", n), unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Close(master)
		return fail(err)
	}
	return reply{}, []int{master, slave}
}
