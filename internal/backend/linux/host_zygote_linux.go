package linux

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/moat-sandbox/moat/internal/cgroup"
	"github.com/moat-sandbox/moat/internal/spec"
	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat/internal/bytestr"
)

// zygote is moat's handle on a sandbox's zygote process.
type zygote struct {
	gen      int // the engine configuration it was built for
	proc     *exec.Cmd
	ctrl     *os.File     // control socket; closing it ends the zygote
	initSock *os.File     // the init's control socket; closing it ends the sandbox's PID namespace
	proxyLn  net.Listener // the proxy's listener inside the network namespace
	dnsLn    net.Listener // the DNS stub's listener inside it, or nil
}

// spawnError is a failure to start the zygote process itself; with
// namespaces, the kernel refusing them shows up here.
type spawnError struct{ err error }

func (e *spawnError) Error() string { return "start sandbox helper: " + e.err.Error() }
func (e *spawnError) Unwrap() error { return e.err }

// Running is one started command. The zero value is not usable; Start
// returns one.
type Running struct {
	engine *Engine
	zyg    *zygote
	// proc is the command itself, a child of this process.
	proc *os.Process
	// reason, after Wait, says why the sandbox ended the command, if it
	// did: it passed the memory limit, and reason says what was counted
	// ("resident 10 MiB, SysV shared memory 1.0 GiB").
	reason string
}

// Process is the command itself, a child of this process.
func (r *Running) Process() *os.Process { return r.proc }

// Reason, after Wait, says why the sandbox ended the command, if it did:
// it passed the memory limit, and Reason says what was counted ("resident
// 10 MiB, SysV shared memory 1.0 GiB"). Empty otherwise.
func (r *Running) Reason() string { return r.reason }

// Start runs c in the sandbox with files as its descriptors 0, 1, 2 and up.
// The caller may close its copies of files afterwards.
func (e *Engine) Start(c *spec.Command, files []*os.File) (spec.Process, error) {
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	cs := commandSpec{Path: c.Path, Args: c.Args, Env: c.Env, Dir: c.Dir, Files: len(fds), Pty: c.Pty}
	e.zmu.Lock()
	defer e.zmu.Unlock()
	// A zygote that died (killed, or past its own CPU limit) is replaced
	// once; a second failure is reported.
	for attempt := 0; ; attempt++ {
		z, err := e.zygoteLocked()
		if err != nil {
			return nil, err
		}
		if os.Getenv(TraceEnv) == "1" {
			cs.TraceStart = time.Now().UnixNano()
		}
		r, err := z.run(&cs, fds)
		if err != nil {
			e.dropZygoteLocked(z)
			if attempt == 0 {
				continue
			}
			return nil, &spec.StartError{Code: 125, Msg: fmt.Sprintf("sandbox helper: %v", err)}
		}
		if r.Error != "" {
			return nil, &spec.StartError{Code: r.Code, Msg: r.Error}
		}
		p, err := os.FindProcess(r.Pid)
		if err != nil {
			return nil, &spec.StartError{Code: 125, Msg: err.Error()}
		}
		e.running++
		return &Running{engine: e, zyg: z, proc: p}, nil
	}
}

// run sends one command to the zygote and reads its reply.
func (z *zygote) run(cs *commandSpec, fds []int) (reply, error) {
	var r reply
	if err := sendMessage(int(z.ctrl.Fd()), cs, fds); err != nil {
		return r, err
	}
	got, err := recvMessage(int(z.ctrl.Fd()), &r)
	closeFDs(got)
	return r, err
}

// Wait waits for the command, kills what is left of its process group while
// its pid cannot be reused yet, reaps it, and, once no command of the
// sandbox runs, kills every process the sandbox still has.
func (r *Running) Wait() (*os.ProcessState, error) {
	pid := r.proc.Pid
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			break
		}
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	state, err := r.proc.Wait()
	e := r.engine
	e.zmu.Lock()
	e.running--
	if e.zyg == r.zyg && r.zyg != nil {
		// Once no command runs, nothing the sandbox started may live on.
		reply := r.zyg.askInit(initRequest{Sweep: e.running == 0})
		e.refusalsPending = e.refusalsPending || reply.Refusals
		if reply.MemoryExceeded {
			r.reason = reply.MemoryDetail
			if r.reason == "" {
				r.reason = "memory limit exceeded"
			}
		}
	}
	e.zmu.Unlock()
	return state, err
}

// Kill kills the command and its process group.
func (r *Running) Kill() {
	_ = syscall.Kill(-r.proc.Pid, syscall.SIGKILL)
	_ = r.proc.Kill()
}

// zygoteLocked returns the sandbox's zygote, starting it the first time and
// after the configuration changed. e.zmu is held.
func (e *Engine) zygoteLocked() (*zygote, error) {
	e.mu.Lock()
	gen, hs, closed, useNS := e.gen, e.base, e.closed, e.ns.User
	e.mu.Unlock()
	if closed {
		return nil, &spec.StartError{Code: 125, Msg: "sandbox closed"}
	}
	if e.zyg != nil && e.zyg.gen == gen {
		return e.zyg, nil
	}
	if e.zyg != nil {
		e.zyg.close()
		e.zyg = nil
	}
	if os.Getenv(TraceEnv) == "1" {
		hs.TraceStart = time.Now().UnixNano()
	}
	z, err := e.startZygote(hs, useNS)
	if err != nil {
		return nil, err
	}
	z.gen = gen
	e.zyg = z
	return z, nil
}

func (e *Engine) dropZygoteLocked(z *zygote) {
	if e.zyg == z {
		e.zyg = nil
		z.close()
	}
}

func (e *Engine) closeZygote() {
	e.zmu.Lock()
	defer e.zmu.Unlock()
	if e.zyg != nil {
		e.zyg.close()
		e.zyg = nil
	}
}

// startZygote starts the zygote and waits until the sandbox is built. A
// zygote spawned ahead (Adopt) is used when it fits.
func (e *Engine) startZygote(hs helperSpec, useNS bool) (*zygote, error) {
	sp := e.pending.take()
	e.pending = nil
	if sp != nil && (sp.useNS != useNS || sp.hostNet != (useNS && e.policy.HostNetwork)) {
		sp.close() // spawned for namespaces the engine does not use now
		sp = nil
	}
	if sp == nil {
		var err error
		if sp, err = spawnZygoteNet(useNS, useNS && e.policy.HostNetwork, e.cg); err != nil {
			return nil, err
		}
	} else if hs.TraceStart != 0 {
		hs.TraceStart = sp.started.UnixNano() // the clone was earlier
	}
	defer sp.statusR.Close()
	z := sp.z
	if e.cg != nil {
		if err := e.cg.Add(z.proc.Process.Pid); err != nil {
			z.close()
			return nil, &spec.StartError{Code: 125, Msg: fmt.Sprintf("cgroup: %v", err)}
		}
	}
	return e.finishZygote(z, sp.statusR, hs, useNS)
}

// spawned is a zygote process waiting for its spec.
type spawned struct {
	z       *zygote
	statusR *os.File
	useNS   bool
	hostNet bool // in the host's network namespace (HostNetwork)
	started time.Time
}

func (sp *spawned) close() {
	sp.z.close()
	sp.statusR.Close()
}

// Spawned is a zygote being started ahead of its sandbox, on the spawner
// thread, while moat works out the policy: its clone, exec and Go runtime
// overlap that work, and it then waits for the sandbox's spec. The zero
// value is not usable (Prespawn returns one); a nil *Spawned is valid and
// does nothing.
type Spawned struct {
	done chan struct{}
	sp   *spawned // when done: the zygote, or nil if it could not start
}

// Prespawn starts a zygote ahead of the sandbox it will build, in the
// namespaces the host allows, for [Engine.Adopt]. If it cannot start, the
// engine starts one itself when needed, and reports why.
func Prespawn() *Spawned {
	s := &Spawned{done: make(chan struct{})}
	go func() {
		defer close(s.done)
		if sp, err := spawnZygote(Probe().UserNS, nil); err == nil {
			s.sp = sp
		}
	}()
	return s
}

// take waits for the zygote and returns it, or nil.
func (s *Spawned) take() *spawned {
	if s == nil {
		return nil
	}
	<-s.done
	sp := s.sp
	s.sp = nil
	return sp
}

// Close ends a zygote that was never adopted, or adopted and not used.
func (s *Spawned) Close() {
	if sp := s.take(); sp != nil {
		sp.close()
	}
}

// Adopt gives the engine a zygote spawned ahead; the engine owns it from
// now on, and closes it if it does not fit.
func (e *Engine) Adopt(sp *Spawned) {
	if sp == nil {
		return
	}
	e.zmu.Lock()
	defer e.zmu.Unlock()
	if e.pending != nil || e.zyg != nil {
		sp.Close()
		return
	}
	e.pending = sp
}

// spawnZygote starts a zygote process, in namespaces when useNS, in the
// cgroup cg when it can be placed there at the clone; it waits for its
// spec.
func spawnZygote(useNS bool, cg *cgroup.Group) (*spawned, error) {
	return spawnZygoteNet(useNS, false, cg)
}

// spawnZygoteNet is spawnZygote, leaving the zygote in the host's network
// namespace when hostNet.
func spawnZygoteNet(useNS, hostNet bool, cg *cgroup.Group) (*spawned, error) {
	ctrl, ctrlChild, err := seqpacketPair("moat-zygote")
	if err != nil {
		return nil, err
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		ctrl.Close()
		ctrlChild.Close()
		return nil, err
	}
	z := &zygote{ctrl: ctrl, proc: &exec.Cmd{
		Path:        "/proc/self/exe",
		Args:        []string{"moat-zygote"},
		Env:         zygoteEnv(),
		ExtraFiles:  bigTable(ctrlChild, statusW),
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}}
	if useNS {
		flags := uintptr(zygoteFlags)
		if hostNet {
			flags &^= syscall.CLONE_NEWNET
		}
		z.proc.SysProcAttr = vforkNamespaceAttr(flags) // host_vforkspawn_linux.go
	}
	if cg != nil && cg.V2FD() >= 0 && clone3Works() {
		z.proc.SysProcAttr.UseCgroupFD = true
		z.proc.SysProcAttr.CgroupFD = cg.V2FD()
	}
	started := time.Now()
	err = startOnSpawner(z.proc)
	ctrlChild.Close()
	statusW.Close()
	if err == nil && useNS {
		if err = mapSpawnedUser(z.proc.Process.Pid); err != nil {
			_ = z.proc.Process.Kill()
			_, _ = z.proc.Process.Wait()
		}
	}
	if err != nil {
		ctrl.Close()
		statusR.Close()
		return nil, &spawnError{err}
	}
	return &spawned{z: z, statusR: statusR, useNS: useNS, hostNet: hostNet, started: started}, nil
}

// zygoteEnv is the zygote's whole environment: its role, and the
// GOMAXPROCS this process runs with, which the zygote's runtime would
// otherwise work out again from the cgroup files at every start.
func zygoteEnv() []string {
	return []string{HelperEnv + "=zygote", "GOMAXPROCS=" + strconv.Itoa(runtime.GOMAXPROCS(0))}
}

// zygoteFDTable is how many descriptors the zygote's table holds from its
// start: building a sandbox holds one per bind (a shared-temp file each)
// at once. The kernel grows the table of a process whose threads share it
// only after an RCU grace period (10 ms here), and a Go program always has
// several threads; so the zygote is started with a descriptor at the
// table's last place, which the child sets up before exec, alone, and the
// zygote closes at once (closeStrayFDs), leaving the table that large.
const zygoteFDTable = 512

// bigTable is ExtraFiles that puts ctrl and status at descriptors 3 and 4
// and a copy of ctrl at zygoteFDTable-1, every descriptor between closed.
func bigTable(ctrl, status *os.File) []*os.File {
	files := make([]*os.File, zygoteFDTable-3)
	files[0], files[1], files[len(files)-1] = ctrl, status, ctrl
	return files
}

// finishZygote sends the spawned zygote its spec and waits until the
// sandbox is built.
func (e *Engine) finishZygote(z *zygote, statusR *os.File, hs helperSpec, useNS bool) (*zygote, error) {
	var err error
	var initChild *os.File
	var send []int
	if useNS {
		if z.initSock, initChild, err = seqpacketPair("moat-init"); err != nil {
			z.close()
			return nil, err
		}
		send = []int{int(initChild.Fd())}
	}
	err = sendMessage(int(z.ctrl.Fd()), &hs, send)
	if initChild != nil {
		initChild.Close()
	}
	if err != nil {
		z.close()
		return nil, &spec.StartError{Code: 125, Msg: err.Error()}
	}
	line, err := bufio.NewReader(statusR).ReadBytes('\n')
	var st status
	if err == nil {
		err = json.Unmarshal(line, &st)
		bytestr.In(&st)
	}
	switch {
	case err != nil:
		z.close()
		return nil, &spec.StartError{Code: 125, Msg: "sandbox helper exited before the sandbox was ready"}
	case st.Error != "":
		z.close()
		return nil, &spec.StartError{Code: st.Code, Msg: st.Error, Namespaces: st.Namespaces, Redirected: st.Redirected}
	}
	if hs.ProxyPort > 0 && useNS {
		if err := z.receiveProxyListener(); err != nil {
			z.close()
			return nil, &spec.StartError{Code: 125, Msg: "proxy listener: " + err.Error()}
		}
		if e.policy.Hooks.ServeProxy != nil {
			e.policy.Hooks.ServeProxy(z.proxyLn)
		}
	}
	if hs.NS.Net {
		if err := z.receiveDNSStub(e.policy.Hooks.DNSQuery); err != nil {
			z.close()
			return nil, &spec.StartError{Code: 125, Msg: "dns stub: " + err.Error()}
		}
	}
	return z, nil
}

// receiveProxyListener takes the listening socket the zygote opened in the
// sandbox's network namespace.
func (z *zygote) receiveProxyListener() error {
	fds, err := recvMessage(int(z.ctrl.Fd()), &proxyHello{})
	if err != nil {
		return err
	}
	if len(fds) != 1 {
		closeFDs(fds)
		return fmt.Errorf("got %d descriptors, want 1", len(fds))
	}
	f := os.NewFile(uintptr(fds[0]), "moat-proxy-listener")
	ln, err := net.FileListener(f) // a duplicate; f's own descriptor is closed now
	f.Close()
	if err != nil {
		return err
	}
	z.proxyLn = ln
	return nil
}

// askInit sends req to the sandbox's init and returns its reply; with
// Sweep set, the init kills every process but itself.
func (z *zygote) askInit(req initRequest) initReply {
	var r initReply
	if z.initSock == nil {
		return r
	}
	fd := int(z.initSock.Fd())
	b := []byte{initQuery}
	if req.Sweep {
		b[0] = initSweep
	}
	if _, err := unix.Write(fd, b); err != nil {
		return r
	}
	buf := make([]byte, 1+initDetailMax)
	for {
		n, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if n > 0 {
			r = decodeInitReply(buf[:n]) // helper_init_linux.go
		}
		return r
	}
}

// close ends the sandbox: the init's exit kills every process of its PID
// namespace, and the zygote's own cleanup handles a sandbox without one.
func (z *zygote) close() {
	if z.proxyLn != nil {
		z.proxyLn.Close() // it holds the network namespace
	}
	if z.dnsLn != nil {
		z.dnsLn.Close() // so does this one
	}
	if z.initSock != nil {
		z.initSock.Close()
	}
	z.ctrl.Close()
	if z.proc.Process == nil {
		return
	}
	done := make(chan struct{})
	go func() { _, _ = z.proc.Process.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		_ = z.proc.Process.Kill()
		<-done
	}
}

func seqpacketPair(name string) (ours, theirs *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), name), os.NewFile(uintptr(fds[1]), name), nil
}

// OpenTerminal returns a pseudo-terminal pair made inside the sandbox, or, for a
// sandbox without a mount namespace, false: the caller then opens one on
// the host.
func (e *Engine) OpenTerminal() (master, slave *os.File, ok bool, err error) {
	e.mu.Lock()
	mountNS := e.ns.Mount
	e.mu.Unlock()
	if !mountNS {
		return nil, nil, false, nil
	}
	e.zmu.Lock()
	defer e.zmu.Unlock()
	z, err := e.zygoteLocked()
	if err != nil {
		return nil, nil, false, err
	}
	if err := sendMessage(int(z.ctrl.Fd()), &commandSpec{OpenPTY: true}, nil); err != nil {
		return nil, nil, false, err
	}
	var r reply
	fds, err := recvMessage(int(z.ctrl.Fd()), &r)
	if err == nil && r.Error != "" {
		err = fmt.Errorf("%s", r.Error)
	}
	if err == nil && len(fds) != 2 {
		err = fmt.Errorf("open pty: got %d descriptors", len(fds))
	}
	if err != nil {
		closeFDs(fds)
		return nil, nil, false, err
	}
	return os.NewFile(uintptr(fds[0]), "/dev/ptmx"), os.NewFile(uintptr(fds[1]), "pty"), true, nil
}
