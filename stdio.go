package moat

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// stdio connects a command's standard descriptors to the caller's streams,
// the way os/exec does: an *os.File is passed as it is, nil is the null
// device, and any other reader or writer is joined by a pipe and a copying
// goroutine. The command's descriptors are sent to the sandbox's helper, so
// they must be real files.
type stdio struct {
	child      [3]*os.File // what the command gets as 0, 1, 2
	childEnds  []*os.File  // ours to close once the helper has them
	parentEnds []*os.File  // ours to close after Wait
	copies     []func() error
	errc       chan error
}

func newStdio(in io.Reader, out, errw io.Writer) (*stdio, error) {
	s := &stdio{}
	var err error
	if s.child[0], err = s.reader(in); err != nil {
		s.abort()
		return nil, err
	}
	if s.child[1], err = s.writer(out); err != nil {
		s.abort()
		return nil, err
	}
	if errw != nil && interfaceEqual(out, errw) {
		s.child[2] = s.child[1]
	} else if s.child[2], err = s.writer(errw); err != nil {
		s.abort()
		return nil, err
	}
	return s, nil
}

func (s *stdio) reader(r io.Reader) (*os.File, error) {
	if r == nil {
		f, err := os.Open(os.DevNull)
		if err == nil {
			s.childEnds = append(s.childEnds, f)
		}
		return f, err
	}
	if f, ok := r.(*os.File); ok {
		return f, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	s.childEnds = append(s.childEnds, pr)
	s.parentEnds = append(s.parentEnds, pw)
	s.copies = append(s.copies, func() error {
		_, err := io.Copy(pw, r)
		if skipStdinCopyError(err) {
			err = nil
		}
		if cerr := pw.Close(); err == nil {
			err = cerr
		}
		return err
	})
	return pr, nil
}

func (s *stdio) writer(w io.Writer) (*os.File, error) {
	if w == nil {
		f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err == nil {
			s.childEnds = append(s.childEnds, f)
		}
		return f, err
	}
	if f, ok := w.(*os.File); ok {
		return f, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	s.childEnds = append(s.childEnds, pw)
	s.parentEnds = append(s.parentEnds, pr)
	s.copies = append(s.copies, func() error {
		_, err := io.Copy(w, pr)
		pr.Close() // in case io.Copy stopped on a write error
		return err
	})
	return pw, nil
}

// interfaceEqual reports a == b without panicking on uncomparable types.
func interfaceEqual(a, b any) (eq bool) {
	defer func() { recover() }()
	return a == b
}

// skipStdinCopyError ignores the errors os/exec ignores when the command
// stops reading its input: a closed pipe.
func skipStdinCopyError(err error) bool {
	var pe *os.PathError
	return err != nil && (errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) ||
		(errors.As(err, &pe) && pe.Op == "write" && errors.Is(pe.Err, syscall.EPIPE)))
}

func (s *stdio) childFiles() []*os.File { return s.child[:] }

// closeChildEnds drops our copies of the command's ends of the pipes.
func (s *stdio) closeChildEnds() {
	for _, f := range s.childEnds {
		f.Close()
	}
	s.childEnds = nil
}

func (s *stdio) startCopying() {
	s.errc = make(chan error, len(s.copies))
	for _, fn := range s.copies {
		go func() { s.errc <- fn() }()
	}
}

// wait waits for the copying goroutines. With a delay it gives up after
// that long, closes the pipes, and returns exec.ErrWaitDelay.
func (s *stdio) wait(delay time.Duration) error {
	var timeout <-chan time.Time
	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		timeout = t.C
	}
	var first error
	for range s.copies {
		select {
		case err := <-s.errc:
			if first == nil {
				first = err
			}
		case <-timeout:
			s.closeParentEnds()
			return exec.ErrWaitDelay
		}
	}
	s.closeParentEnds()
	return first
}

func (s *stdio) closeParentEnds() {
	for _, f := range s.parentEnds {
		f.Close()
	}
}

// abort releases everything of a command that did not start.
func (s *stdio) abort() {
	s.closeChildEnds()
	s.closeParentEnds()
}
