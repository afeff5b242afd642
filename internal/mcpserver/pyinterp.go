package mcpserver

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/session"
)

//go:embed pydriver/driver.py
var driverSource string

// interp is a connection's persistent Python interpreter: a python3 (the
// venv's when the sandbox has one) running the driver in the session's
// sandbox, spoken to on fds 3 and 4. One call at a time.
type interp struct {
	sess *session.Session

	callMu sync.Mutex // one call at a time

	mu      sync.Mutex // guards the fields below; never held across a call's I/O
	stopped bool
	cmd     *moat.Cmd
	cancel  context.CancelFunc
	req     *os.File // our end of the driver's fd 3
	res     *os.File // our end of the driver's fd 4
	waited  chan struct{}
}

// pyCall is how one call ended.
type pyCall struct {
	res pyResult
	// lost says why the interpreter was killed or died during the call
	// (its variables are gone; the next call starts a fresh one); empty
	// when it lives on.
	lost     string
	timedOut bool
}

// start launches the driver.
func (p *interp) start() error {
	sb := p.sess.Sandbox()
	if sb == nil {
		return &session.Error{Code: session.CodeInternal, Message: "the session has no sandbox for Python"}
	}
	reqR, reqW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("python interpreter: %w", err)
	}
	resR, resW, err := os.Pipe()
	if err != nil {
		reqR.Close()
		reqW.Close()
		return fmt.Errorf("python interpreter: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pc := sb.PythonCommand("-u", "-c", driverSource)
	cmd := sb.CommandContext(ctx, pc.Path, pc.Args[1:]...)
	cmd.Env = pc.Env
	cmd.ExtraFiles = []*os.File{reqR, resW}
	cmd.WaitDelay = 2 * time.Second
	err = cmd.Start()
	reqR.Close()
	resW.Close()
	if err != nil {
		cancel()
		reqW.Close()
		resR.Close()
		return &session.Error{Code: session.CodeStart, Message: fmt.Sprintf("the Python interpreter could not start: %q", err.Error())}
	}
	p.cmd, p.cancel, p.req, p.res = cmd, cancel, reqW, resR
	p.waited = make(chan struct{})
	go func(w chan struct{}) { _ = cmd.Wait(); close(w) }(p.waited)
	return nil
}

// kill ends the interpreter's process tree and forgets it; the call in
// progress, if any, then fails on its closed descriptors.
func (p *interp) kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return
	}
	p.cancel()
	p.req.Close()
	p.res.Close()
	<-p.waited
	p.cmd = nil
}

// stop ends the interpreter for good, at once, for the connection's close.
func (p *interp) stop() {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	p.kill()
}

// pipes returns the running interpreter's descriptors, starting it first
// when there is none.
func (p *interp) pipes() (req, res *os.File, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return nil, nil, &session.Error{Code: session.CodeClosed, Message: "this connection's Python interpreter was stopped"}
	}
	if p.cmd == nil {
		if err := p.start(); err != nil {
			return nil, nil, err
		}
	}
	return p.req, p.res, nil
}

// call runs code, waiting at most timeout for its result.
func (p *interp) call(ctx context.Context, code string, timeout time.Duration) (pyCall, error) {
	p.callMu.Lock()
	defer p.callMu.Unlock()
	reqW, resR, err := p.pipes()
	if err != nil {
		return pyCall{}, err
	}
	var nb [16]byte
	if _, err := rand.Read(nb[:]); err != nil {
		return pyCall{}, fmt.Errorf("python interpreter: nonce: %w", err)
	}
	nonce := hex.EncodeToString(nb[:])
	frame, err := encodeFrame(pyRequest{Nonce: nonce, Code: code})
	if err != nil {
		return pyCall{}, fmt.Errorf("python interpreter: %w", err)
	}
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = reqW.SetWriteDeadline(deadline)
	_ = resR.SetReadDeadline(deadline)
	// A client that gives up ends the wait at once.
	stopWatch := context.AfterFunc(ctx, func() { _ = resR.SetReadDeadline(time.Now()); _ = reqW.SetWriteDeadline(time.Now()) })
	defer stopWatch()

	var body []byte
	if _, err = reqW.Write(frame); err == nil {
		body, err = readFrame(resR, maxResultFrame)
	}
	switch {
	case err == nil:
	case errors.Is(err, os.ErrDeadlineExceeded):
		p.kill()
		if ctx.Err() != nil {
			return pyCall{lost: "the call was cancelled; the interpreter was killed and its variables were lost"}, nil
		}
		return pyCall{timedOut: true, lost: fmt.Sprintf("the code ran past the %s timeout; the interpreter was killed and its variables were lost (the next call starts a fresh one)", timeout)}, nil
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, os.ErrClosed):
		p.kill()
		return pyCall{lost: "the interpreter exited during the call (os._exit, a crash or a limit); its variables were lost (the next call starts a fresh one)"}, nil
	default:
		p.kill()
		return pyCall{lost: fmt.Sprintf("the interpreter broke its protocol (%s); it was killed and its variables were lost", safeErr(err))}, nil
	}
	r, err := decodeResult(body, nonce)
	if err != nil {
		p.kill()
		return pyCall{lost: fmt.Sprintf("the interpreter broke its protocol (%s); it was killed and its variables were lost", safeErr(err))}, nil
	}
	return pyCall{res: r}, nil
}

// safeErr words an error for the model, quoted.
func safeErr(err error) string {
	s := err.Error()
	if len(s) > 200 {
		s = s[:200]
	}
	return fmt.Sprintf("%q", s)
}
