package session

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/moat-sandbox/moat"
)

// stopGrace is how long Stop waits after TERM before it kills the tree.
const stopGrace = 2 * time.Second

// maxProcs bounds the background processes a session keeps, running or
// exited: a new one past it replaces the oldest exited one, and is refused
// while all of them run. Their output together keeps at most the
// session's budget (outbudget.go), each stream an equal share of it.
const maxProcs = 64

// proc is one background process of a session.
type proc struct {
	id      string
	argv    []string
	cmd     *moat.Cmd
	kill    context.CancelFunc // kills the whole process tree
	started time.Time
	stdout  *ring
	stderr  *ring
	done    chan struct{} // closed once exited and waited for

	mu       sync.Mutex
	exitCode *int
	signal   string
}

// Start starts req in the background; its output is kept in rings of
// its share of the session's output budget per stream (at most
// OutputCap), and the other processes' shares shrink to make room.
func (s *Session) Start(req StartRequest) (Proc, error) {
	if err := s.touch(); err != nil {
		return Proc{}, err
	}
	env, err := commandEnv(req.Env)
	if err != nil {
		return Proc{}, err
	}
	if err := checkCommand(req.Argv, req.Cwd); err != nil {
		return Proc{}, err
	}
	ctx, kill := context.WithCancel(context.Background())
	cmd := s.sb.CommandContext(ctx, req.Argv[0], req.Argv[1:]...)
	cmd.Args = slices.Clone(req.Argv)
	cmd.Env, cmd.Dir, cmd.WaitDelay = env, req.Cwd, waitDelay
	p := &proc{
		argv: slices.Clone(req.Argv), cmd: cmd, kill: kill,
		stdout: newRing(0), stderr: newRing(0), done: make(chan struct{}),
	}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		kill()
		return Proc{}, errClosed(s.id)
	}
	if !s.makeRoomLocked() {
		s.mu.Unlock()
		kill()
		return Proc{}, errorf(CodeBusy, "%d background processes run in this session, the most it keeps; stop one first", maxProcs)
	}
	s.shareOutputLocked(len(s.order)+1, p) // before it can write
	if err := cmd.Start(); err != nil {
		s.shareOutputLocked(len(s.order), nil)
		s.mu.Unlock()
		kill()
		return Proc{}, startFailure(req.Argv[0], err)
	}
	s.nextProc++
	p.id = "p" + strconv.Itoa(s.nextProc)
	p.started = time.Now()
	if s.procs == nil {
		s.procs = map[string]*proc{}
	}
	s.procs[p.id] = p
	s.order = append(s.order, p.id)
	s.mu.Unlock()
	s.m.logf("session %s: started %s %q", s.id, p.id, req.Argv)
	go p.wait()
	return p.info(), nil
}

// makeRoomLocked drops the oldest exited process while the session keeps
// maxProcs; false when all of them still run. s.mu is held.
func (s *Session) makeRoomLocked() bool {
	if len(s.order) < maxProcs {
		return true
	}
	for i, id := range s.order {
		select {
		case <-s.procs[id].done:
			delete(s.procs, id)
			s.order = append(s.order[:i], s.order[i+1:]...)
			return true
		default:
		}
	}
	return false
}

// wait records how p ended.
func (p *proc) wait() {
	err := p.cmd.Wait()
	code, sig := 0, ""
	var ee *moat.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code, sig = ee.ExitCode(), exitSignal(ee.ProcessState)
	default:
		code = -1
	}
	if sig != "" {
		code = -1
	}
	p.mu.Lock()
	p.exitCode, p.signal = &code, sig
	p.mu.Unlock()
	p.kill() // what the command left behind goes with it
	close(p.done)
}

// info describes p now.
func (p *proc) info() Proc {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := Proc{ID: p.id, Argv: slices.Clone(p.argv), State: "running", Started: stamp(p.started), Signal: p.signal}
	if p.cmd.Process != nil {
		out.PID = p.cmd.Process.Pid
	}
	if p.exitCode != nil {
		code := *p.exitCode
		out.State, out.ExitCode = "exited", &code
	}
	return out
}

// Procs lists the session's background processes, oldest first.
func (s *Session) Procs() []Proc {
	if s.touch() != nil {
		return []Proc{}
	}
	s.mu.Lock()
	ps := make([]*proc, 0, len(s.order))
	for _, id := range s.order {
		ps = append(ps, s.procs[id])
	}
	s.mu.Unlock()
	out := make([]Proc, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.info())
	}
	return out
}

// proc finds a background process by id.
func (s *Session) proc(id string) (*proc, error) {
	if err := s.touch(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.procs[id]
	if !ok {
		return nil, errorf(CodeNotFound, "no background process %q in session %q; list them to see their ids", id, s.id)
	}
	return p, nil
}

// Output returns what process id wrote from the two offsets on, as much as
// is still kept.
func (s *Session) Output(id string, stdoutFrom, stderrFrom int64) (ProcOutput, error) {
	p, err := s.proc(id)
	if err != nil {
		return ProcOutput{}, err
	}
	if stdoutFrom < 0 || stderrFrom < 0 {
		return ProcOutput{}, errorf(CodeBadRequest, "an offset is negative: give 0, or the \"next\" of the last read")
	}
	info := p.info() // first: an exited state means the output below is complete
	return ProcOutput{Proc: info, Stdout: p.stdout.Read(stdoutFrom), Stderr: p.stderr.Read(stderrFrom)}, nil
}

// Signal sends sig ("TERM", "INT", "KILL", "HUP", "USR1", "USR2") to
// process id's process group.
func (s *Session) Signal(id string, sig string) error {
	p, err := s.proc(id)
	if err != nil {
		return err
	}
	n, ok := signals[sig]
	if !ok {
		return errorf(CodeBadRequest, "signal %q: want TERM, INT, KILL, HUP, USR1 or USR2", sig)
	}
	select {
	case <-p.done:
		return nil // nothing left to tell
	default:
	}
	if sig == "KILL" {
		p.kill()
		return nil
	}
	_ = signalGroup(p.cmd.Process, n) // fails only once the group is gone
	return nil
}

// Stop ends process id: TERM to its process group, then after 2 s the
// whole tree is killed. It returns once the process is gone.
func (s *Session) Stop(id string) (Proc, error) {
	p, err := s.proc(id)
	if err != nil {
		return Proc{}, err
	}
	p.stop()
	return p.info(), nil
}

// stop is Stop of p.
func (p *proc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = signalGroup(p.cmd.Process, signals["TERM"])
	select {
	case <-p.done:
	case <-time.After(stopGrace):
		p.kill()
		<-p.done
	}
}
