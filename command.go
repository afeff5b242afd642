package moat

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/moat-sandbox/moat/internal/buildmode"
	"github.com/moat-sandbox/moat/internal/hostfacts"
	"github.com/moat-sandbox/moat/internal/limitkill"
	"github.com/moat-sandbox/moat/internal/lookpath"
	"github.com/moat-sandbox/moat/internal/refusal"
	"github.com/moat-sandbox/moat/internal/spec"
)

// Cmd is a command prepared or running in a [Sandbox]. It is used exactly
// like [os/exec.Cmd]; the differences are noted on the fields. A Cmd cannot
// be reused after Run, Output or CombinedOutput. Create it with
// [Sandbox.Command]; the zero value is not usable.
type Cmd struct {
	// Path is the command to run. A relative path containing a slash is
	// relative to Dir. Set by Sandbox.Command from the sandbox's PATH.
	Path string

	// Args holds the command line arguments, including the command as
	// Args[0]. Empty means [Path].
	Args []string

	// Env holds NAME=VALUE entries applied over the sandbox's environment
	// (see [Env]); nil adds nothing. LD_* and DYLD_* are always removed.
	Env []string

	// Dir is the working directory of the command. Empty means the
	// sandbox's working directory; a relative path is relative to it.
	Dir string

	// Stdin, Stdout and Stderr are the command's standard streams, as in
	// os/exec: nil means the null device; an *os.File is passed directly.
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer

	// ExtraFiles are passed to the command as descriptors 3 and up. No
	// other descriptor of the caller reaches the sandbox.
	ExtraFiles []*os.File

	// Cancel, when the Cmd was created with CommandContext, is called when
	// the context is done; nil means the whole process tree is killed.
	Cancel func() error

	// WaitDelay bounds the wait for I/O after the command exits or the
	// context is done, as in os/exec. Zero means no bound.
	WaitDelay time.Duration

	// Process is the command's process once started, a child of this
	// process as with os/exec. It leads its own session and process group.
	Process *os.Process

	// ProcessState describes the command after Wait.
	ProcessState *os.ProcessState

	// Setctty makes Stdin, which must then be a terminal (the slave side of
	// a pty), the controlling terminal of the command, for interactive
	// shells. False starts the command in a new session with no terminal,
	// which is what keeps TIOCSTI-style injection away from the caller's.
	Setctty bool

	sb     *Sandbox
	ctx    context.Context
	launch spec.Process
	io     *stdio // the plumbing between the caller's streams and the command's descriptors

	// Pipes made by the *Pipe methods: the sandbox's ends are closed once
	// the command started, ours once it was waited for, as in os/exec.
	closeAfterStart []io.Closer
	closeAfterWait  []io.Closer

	mu     sync.Mutex
	reason string
	limit  string // the limit that ended the command (limitKilled), with reason
	// overAtExit is set when the disk watch's last sample, after the
	// command ended, found a limit passed (disk.go): the command fails
	// even if it exited 0.
	overAtExit bool
	checked    bool  // Check ran the pre-start checks (prestart.go)
	diskSpent  bool  // the disk watch found the disk limit all but spent (noteDiskSpent)
	fileSize   int64 // RLIMIT_FSIZE the command started with: what was left of the disk limit, if less than the file size limit
	timer      *time.Timer
	watchdog   func()
	ctxDone    chan struct{}
	started    bool
	finished   bool
	done       chan struct{}
}

func (s *Sandbox) newCmd(name string, args []string) *Cmd {
	return &Cmd{
		sb:   s,
		Path: name,
		Args: append([]string{name}, args...),
		done: make(chan struct{}),
	}
}

// String returns a human-readable description of c, for logs.
func (c *Cmd) String() string {
	var b bytes.Buffer
	b.WriteString(c.Path)
	for _, a := range c.Args[min(1, len(c.Args)):] {
		b.WriteByte(' ')
		b.WriteString(a)
	}
	return b.String()
}

// StdinPipe returns a pipe connected to the command's standard input, as in
// os/exec. Closing it, or Wait, ends the input.
func (c *Cmd) StdinPipe() (io.WriteCloser, error) {
	if c.Stdin != nil {
		return nil, errors.New("Stdin already set")
	}
	if c.Process != nil {
		return nil, errors.New("StdinPipe after process started")
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	c.Stdin = r
	c.closeAfterStart = append(c.closeAfterStart, r)
	wc := &closeOnce{File: w}
	c.closeAfterWait = append(c.closeAfterWait, wc)
	return wc, nil
}

// StdoutPipe returns a pipe connected to the command's standard output, as
// in os/exec: read it fully before calling Wait.
func (c *Cmd) StdoutPipe() (io.ReadCloser, error) {
	if c.Stdout != nil {
		return nil, errors.New("Stdout already set")
	}
	return c.outputPipe(&c.Stdout)
}

// StderrPipe returns a pipe connected to the command's standard error, as in
// os/exec: read it fully before calling Wait.
func (c *Cmd) StderrPipe() (io.ReadCloser, error) {
	if c.Stderr != nil {
		return nil, errors.New("Stderr already set")
	}
	return c.outputPipe(&c.Stderr)
}

func (c *Cmd) outputPipe(dst *io.Writer) (io.ReadCloser, error) {
	if c.Process != nil {
		return nil, errors.New("pipe requested after process started")
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	*dst = w
	c.closeAfterStart = append(c.closeAfterStart, w)
	c.closeAfterWait = append(c.closeAfterWait, r)
	return r, nil
}

// closeOnce makes a second Close of StdinPipe's writer harmless, as in
// os/exec.
type closeOnce struct {
	*os.File
	once sync.Once
	err  error
}

func (c *closeOnce) Close() error {
	c.once.Do(func() { c.err = c.File.Close() })
	return c.err
}

func closeAll(cs []io.Closer) {
	for _, c := range cs {
		c.Close()
	}
}

// Run starts the command and waits for it to finish.
func (c *Cmd) Run() error {
	if err := c.Start(); err != nil {
		return err
	}
	return c.Wait()
}

// Output runs the command and returns its standard output. If Stderr is nil,
// a failing command's [*ExitError] carries part of its standard error.
func (c *Cmd) Output() ([]byte, error) {
	if c.Stdout != nil {
		return nil, errors.New("Stdout already set")
	}
	var stdout bytes.Buffer
	c.Stdout = &stdout
	var stderr *cappedBuffer
	if c.Stderr == nil {
		stderr = &cappedBuffer{max: 32 << 10}
		c.Stderr = stderr
	}
	err := c.Run()
	var ee *ExitError
	if stderr != nil && errors.As(err, &ee) {
		ee.Stderr = stderr.Bytes()
	}
	return stdout.Bytes(), err
}

// CombinedOutput runs the command and returns its standard output and
// standard error together.
func (c *Cmd) CombinedOutput() ([]byte, error) {
	if c.Stdout != nil || c.Stderr != nil {
		return nil, errors.New("Stdout or Stderr already set")
	}
	var b syncBuffer
	c.Stdout, c.Stderr = &b, &b
	err := c.Run()
	return b.Bytes(), err
}

// Start starts the command in the sandbox and returns once it runs; it does
// not wait for it to finish. An executable that cannot be found gives an
// error matching [exec.ErrNotFound]; one the sandbox may not execute, an
// error matching [os.ErrPermission].
func (c *Cmd) Start() error {
	c.mu.Lock()
	if c.started {
		c.mu.Unlock()
		return errors.New("already started")
	}
	c.started = true
	c.mu.Unlock()
	if c.ctx != nil {
		if err := c.ctx.Err(); err != nil {
			return err
		}
	}
	if err := c.sb.track(c); err != nil {
		return err
	}
	err := c.start()
	closeAll(c.closeAfterStart)
	if err != nil {
		closeAll(c.closeAfterWait)
		c.sb.untrack(c)
		close(c.done)
		return err
	}
	return nil
}

func (c *Cmd) start() error {
	env := c.sb.cmdEnv(c.Env) // env.go: TMPDIR as seen inside
	dir := c.sb.dirs.CommandDir(c.Dir)
	args := c.Args
	if len(args) == 0 {
		args = []string{c.Path}
	}
	if !c.checked { // prestart.go: Cmd.Check ran them already
		c.sb.pre.Check(func() []string { return env }, c.Env, append([]string{c.Path}, args[1:]...))
	}
	path, err := c.resolveExecutable(c.Path, dir, env)
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			c.sb.pre.NoteHiddenProgram(c.Path)
		}
		return err
	}
	c.fileSize = c.sb.disk.FileSizeBudget()
	cmd := &spec.Command{Path: path, Args: args, Env: env, Dir: dir, Pty: c.Setctty}
	c.io, err = newStdio(c.Stdin, c.Stdout, c.Stderr)
	if err != nil {
		return errorf("stdio: %w", err)
	}
	files := append(c.io.childFiles(), c.ExtraFiles...)
	// The disk watch's baseline comes first: a command that writes at
	// once, on a loaded host, would otherwise write before it is taken.
	c.armDisk()
	err = c.launchHelper(cmd, files)
	if errors.Is(err, errNamespaces) {
		// The host refused the namespaces after all: the backend has
		// switched them off and reports it; this command runs without,
		// unless Strict enforcement refuses what that loses (below).
		cmd.Env = c.sb.cmdEnv(c.Env)
		err = c.launchHelper(cmd, files)
	}
	c.io.closeChildEnds()
	if err != nil {
		c.io.abort()
		if c.watchdog != nil {
			c.watchdog()
			c.watchdog = nil
		}
		return err
	}
	c.mu.Lock()
	killed := c.limit != ""
	c.mu.Unlock()
	if killed { // a limit passed while it was launched
		c.killTree("")
	}
	c.io.startCopying()
	c.armLimits()
	if c.ctx != nil {
		c.watchContext()
	}
	return nil
}

// launchHelper hands the command to the sandbox.
func (c *Cmd) launchHelper(cmd *spec.Command, files []*os.File) error {
	// What the backend enforces can shrink after New (a namespace
	// fallback): under Strict enforcement, every start checks again.
	if err := strictMissing(c.sb.cfg.Enforcement, c.sb.backend); err != nil {
		return err
	}
	l, err := c.sb.backend.Start(cmd, files)
	if err != nil {
		if c.sb.backend.Fallback(err) {
			return errNamespaces
		}
		return startError(err)
	}
	c.mu.Lock()
	c.launch = l
	c.Process = l.Process()
	c.mu.Unlock()
	return nil
}

// strictMissing is the *UnsupportedError that Strict enforcement makes of
// what backend b cannot enforce now, or nil.
func strictMissing(enf Enforcement, b spec.Backend) error {
	if enf != Strict {
		return nil
	}
	if missing := b.Missing(); len(missing) > 0 {
		return &UnsupportedError{Missing: missing}
	}
	return nil
}

// watchContext kills the command, or calls Cancel, when its context is done
// before it exits.
func (c *Cmd) watchContext() {
	c.ctxDone = make(chan struct{})
	go func() {
		select {
		case <-c.ctx.Done():
			if c.Cancel != nil {
				_ = c.Cancel()
			} else {
				c.killTree("")
			}
			if c.WaitDelay > 0 {
				select {
				case <-time.After(c.WaitDelay):
					c.killTree("")
				case <-c.done:
				}
			}
		case <-c.ctxDone:
		}
	}()
}

// armLimits starts the wall-clock timer.
func (c *Cmd) armLimits() {
	lim := c.sb.cfg.Limits
	if lim.Timeout > 0 {
		c.timer = time.AfterFunc(lim.Timeout, func() { c.killLimit(limitkill.Timeout(lim.Timeout)) })
	}
}

// armDisk starts the disk watchdog, before the command is launched.
func (c *Cmd) armDisk() {
	pid := func() int {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.Process == nil {
			return 0
		}
		return c.Process.Pid
	}
	// disk.go: a command that ended over a limit, faster than one poll,
	// fails with the limit's message (overAtExit).
	c.watchdog = watchDisk(&c.sb.disk, pid, c.fileSize > 0, func(k limitkill.Kill, atExit bool) {
		if atExit {
			c.mu.Lock()
			c.overAtExit = true
			c.mu.Unlock()
		}
		c.killLimit(k)
	}, c.noteDiskSpent)
}

// noteDiskSpent records, once per sandbox, that the disk limit is all but
// spent while c runs: RLIMIT_FSIZE now refuses writes past it, in any
// process of the tree, whether or not the command's exit status shows it
// (a child killed by SIGXFSZ inside a pipe; Python, which ignores SIGXFSZ
// and exits 1 on "File too large").
func (c *Cmd) noteDiskSpent() {
	c.mu.Lock()
	c.diskSpent = true
	c.mu.Unlock()
	c.sb.refused.Add(limitRefusal(limitkill.DiskSpent(c.sb.disk.Bytes())))
}

// Wait waits for the command to exit and for its I/O to be copied. A
// command that exits non-zero or is killed gives an [*ExitError].
func (c *Cmd) Wait() error {
	c.mu.Lock()
	if !c.started || c.launch == nil {
		c.mu.Unlock()
		return errors.New("not started")
	}
	if c.finished {
		c.mu.Unlock()
		return errors.New("Wait was already called")
	}
	c.finished = true
	c.mu.Unlock()

	state, waitErr := c.launch.Wait()
	noteSocketRefusals(c.sb.backend, &c.sb.refused, &c.sb.build)
	if c.timer != nil {
		c.timer.Stop()
	}
	if c.watchdog != nil {
		c.watchdog()
	}
	if c.ctxDone != nil {
		close(c.ctxDone)
	}
	ioErr := c.io.wait(c.WaitDelay)
	closeAll(c.closeAfterWait)
	c.ProcessState = state
	close(c.done)
	c.sb.untrack(c)
	if waitErr != nil {
		return errorf("wait: %w", waitErr)
	}
	c.mu.Lock()
	over, overReason := c.overAtExit, c.reason
	c.mu.Unlock()
	if over && state.Success() {
		return &ExitError{ProcessState: state, reason: overReason, limit: c.limitOf()}
	}
	if !state.Success() {
		c.sb.build.NoteExit(c.Path, state.ExitCode(), c.sb.backend.SupervisesExec())
		c.mu.Lock()
		reason := c.reason
		c.mu.Unlock()
		if reason == "" {
			if detail := c.launch.Reason(); detail != "" {
				// The only limit the sandbox itself watches: memory.
				reason = c.limitKilled(limitkill.Memory(c.sb.cfg.Limits.MemoryBytes, detail))
			} else if k, ok := c.kernelLimitKill(state, c.fileSize); ok {
				reason = c.limitKilled(k)
			}
		}
		return &ExitError{ProcessState: state, reason: reason, limit: c.limitOf()}
	}
	return ioErr
}

// noteSocketRefusals records in refused what backend b's supervisor saw
// the sandbox refused since the last call: host sockets, execs of written
// files (build mode's, internal/buildmode), socket families.
func noteSocketRefusals(b spec.Backend, refused *refusal.List, build *buildmode.Mode) {
	for _, r := range b.Refusals() {
		if r.Dropped > 0 {
			refused.NoteDropped(r.Kind, r.Dropped) // internal/refusal
			continue
		}
		switch r.Kind {
		case spec.RefusedUnixSocket:
			refused.Add(Refusal{
				Kind:    "socket",
				Subject: r.Subject,
				Detail:  "a host Unix socket; connecting to it is refused",
				Setting: "sockets",
			})
		case spec.RefusedExec:
			build.NoteWrittenExec(r.Subject)
		case spec.RefusedSocket:
			// No flag opens other families: the detail says what the
			// sandbox may use instead.
			refused.Add(Refusal{Kind: "socket", Subject: r.Subject, Detail: r.Detail})
		}
	}
}

// killLimit kills the command's whole process tree because it passed limit
// k, which is recorded once, as the ExitError's reason and a refusal.
func (c *Cmd) killLimit(k limitkill.Kill) {
	c.limitKilled(k)
	c.killTree("")
}

// killTree kills the command's whole process tree. reason, if not empty, is
// recorded for the ExitError.
func (c *Cmd) killTree(reason string) {
	c.mu.Lock()
	if reason != "" && c.reason == "" {
		c.reason = reason
	}
	l := c.launch
	c.mu.Unlock()
	if l != nil {
		l.Kill()
	}
}

// awaitDeath waits up to a few seconds until the supervisor has exited,
// without reaping it, so Close can remove the working directory.
func (c *Cmd) awaitDeath() {
	select {
	case <-c.done:
		return
	default:
	}
	if c.Process == nil {
		return
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if hostfacts.Exited(c.Process.Pid) {
			return
		}
		select {
		case <-c.done:
			return
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// cappedBuffer keeps the first max bytes written to it.
type cappedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (b *cappedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Bytes()
}

// syncBuffer is a bytes.Buffer safe for the two copying goroutines of
// CombinedOutput when Stdout and Stderr are the same writer.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Bytes()
}

// limitRefusal is limit kill k as a refusal of kind "limit".
func limitRefusal(k limitkill.Kill) Refusal {
	return refusal.Derived(Refusal{Kind: "limit", Subject: k.Subject, Detail: k.Detail, Setting: k.Setting, Value: k.Value})
}

// limitKilled records k once: as the reason the ExitError gives (the first
// one wins) and as a refusal of the sandbox.
func (c *Cmd) limitKilled(k limitkill.Kill) string {
	r := limitRefusal(k)
	reason := r.String()
	c.mu.Lock()
	first := c.reason == ""
	if first {
		c.reason, c.limit = reason, k.Subject
	}
	c.mu.Unlock()
	if first {
		c.sb.refused.Add(r)
	}
	return reason
}

// limitOf names the limit that ended the command, or "" for none.
func (c *Cmd) limitOf() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.limit
}

// kernelLimitKill recognises a command the kernel ended for one of moat's
// rlimits, from its wait status (internal/limitkill: FromExit).
func (c *Cmd) kernelLimitKill(state *os.ProcessState, fsize int64) (limitkill.Kill, bool) {
	lim := c.sb.cfg.Limits
	return limitkill.FromExit(state, fsize, limitkill.Limits{CPUSeconds: lim.CPUSeconds, FileSizeBytes: lim.FileSizeBytes, DiskBytes: c.sb.disk.Bytes()}, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.diskSpent
	})
}

// resolveExecutable finds name as the sandbox would, with the sandbox's
// PATH, and checks that the file it finally names lies where the sandbox may
// execute (internal/lookpath). Failing here gives a clear error instead of a
// bare EACCES from inside the sandbox.
func (c *Cmd) resolveExecutable(name, dir string, env []string) (string, error) {
	path, err := lookpath.Resolve(name, dir, lookupEnv(env, "PATH"), c.sb.backend.ExecRoots())
	var le *lookpath.Error
	if errors.As(err, &le) {
		if le.Refused != "" {
			c.sb.build.NoteExecRefused(le.Refused)
		}
		return "", &commandError{msg: le.Msg, kind: le.Kind}
	}
	return path, err
}
