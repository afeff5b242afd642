package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/fileserve"
)

// fileServer is one running file server: the sandboxed process and its
// pipes (ours, pollable, so each call can carry a deadline).
type fileServer struct {
	cmd    *moat.Cmd
	cancel context.CancelFunc // kills its process tree
	in     *os.File           // its stdin
	out    *os.File           // its stdout
	stderr *tailBuffer
	done   chan struct{} // closed when it was waited for
}

// start starts a file server; f.mu is held.
func (f *Files) start() error {
	cfg, err := json.Marshal(f.cfg)
	if err != nil {
		return internalError("file API", err)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return internalError("file API", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return internalError("file API", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	args := f.args
	if args == nil {
		args = []string{"moat-fileserve", string(cfg)}
	}
	cmd := f.sb.CommandContext(ctx, f.exe, args...)
	cmd.Env = []string{fileserve.Env + "=1", "GOMAXPROCS=1"}
	s := &fileServer{cmd: cmd, cancel: cancel, in: inW, out: outR, stderr: &tailBuffer{max: 4096}, done: make(chan struct{})}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, s.stderr
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		cancel()
		inW.Close()
		outR.Close()
		return errorf(CodeInternal, "file API: the file server did not start in the sandbox: %v", err)
	}
	go func() {
		cmd.Wait()
		close(s.done)
	}()
	f.srv = s
	return nil
}

// stop kills the file server, if one runs, and waits for it; f.mu is
// held.
func (f *Files) stop() {
	s := f.srv
	if s == nil {
		return
	}
	f.srv = nil
	s.in.Close()
	s.cancel()
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
	}
	s.out.Close()
}

// errServerGone is a server that ended before it answered: it is
// restarted and the call tried once more (every call is idempotent).
var errServerGone = errors.New("the file server ended")

// call sends req and returns its checked reply, or the *Error it carried.
func (f *Files) call(req fileserve.Request) (fileserve.Reply, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return fileserve.Reply{}, errorf(CodeClosed, "the session's file API is closed")
	}
	if len(req.Path) > fileserve.MaxPath {
		return fileserve.Reply{}, errorf(CodeBadRequest, "a path of %d bytes is longer than %d", len(req.Path), fileserve.MaxPath)
	}
	for try := 0; ; try++ {
		if f.srv == nil {
			if err := f.start(); err != nil {
				return fileserve.Reply{}, err
			}
		}
		f.nextID++
		req.ID = f.nextID
		rep, err := f.exchange(req)
		if err == nil {
			if rep.Error != nil {
				return fileserve.Reply{}, faultError(req, rep.Error, f.cfg)
			}
			return rep, nil
		}
		tail := f.srv.stderr.String()
		f.stop()
		switch {
		case errors.Is(err, errServerGone) && try == 0:
			continue
		case errors.Is(err, os.ErrDeadlineExceeded):
			return fileserve.Reply{}, errorf(CodeInternal, "%q: the file server did not answer within %v; it was stopped and the next call starts another", req.Path, f.timeout)
		}
		return fileserve.Reply{}, errorf(CodeInternal, "%q: the file server failed: %v (its last words: %q)", req.Path, err, tail)
	}
}

// exchange writes req and reads its reply, within the call's deadline.
func (f *Files) exchange(req fileserve.Request) (fileserve.Reply, error) {
	s := f.srv
	deadline := time.Now().Add(f.timeout)
	s.in.SetWriteDeadline(deadline)
	s.out.SetReadDeadline(deadline)
	if err := fileserve.WriteFrame(s.in, req, f.cfg.MaxFileBytes/3*4+1<<20); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return fileserve.Reply{}, err
		}
		return fileserve.Reply{}, fmt.Errorf("%w: %v", errServerGone, err)
	}
	b, err := fileserve.ReadFrame(s.out, fileserve.ReplyBound(f.cfg.MaxReadBytes))
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fileserve.Reply{}, errServerGone
	case err != nil:
		return fileserve.Reply{}, err
	}
	return checkReply(b, req, f.cfg)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
