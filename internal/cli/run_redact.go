package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/moat-sandbox/moat/internal/cli/termfilter"
	"github.com/moat-sandbox/moat/redact"
)

// runRedactUsage documents moat run --redact.
const runRedactUsage = "pass the command's standard output and error through the redactor, `ENGINE` rules (the default), model or both, so secrets it prints never reach whoever reads them; the command sees pipes, not a terminal, output comes out line by line, output bound for a terminal loses clipboard writes, titles and terminal queries, and if the redactor fails the output stops and moat exits 125"

// runRedactFlag is moat run's --redact[=ENGINE]; "" means off.
type runRedactFlag struct{ engine string }

// addRunRedactFlag registers --redact on moat run's flags.
func addRunRedactFlag(fs *pflag.FlagSet) *runRedactFlag {
	f := &runRedactFlag{}
	fs.StringVar(&f.engine, "redact", "", runRedactUsage)
	fs.Lookup("redact").NoOptDefVal = redact.EngineRules
	return f
}

// wrap runs run with stdio whose out and err are pipes into redacting
// writers on the real streams, when --redact is on; otherwise it runs it
// with std unchanged. When out and err reach the same place (the same
// device and inode), the command gets one pipe for both, as 2>&1 does,
// and one writer redacts it: a secret written half on each stream is one
// text to the redactor.
//
// A terminal or socket on standard input is replaced by a pipe too, since
// the command could write into it (see readOnlyStdin). Everything written
// on the output pipes, the command's output and moat's own lines after it
// (the refusal summary), is redacted. If the redactor
// fails, the stream's output stops there: moat prints one line saying so
// on the real standard error, keeps reading the pipe so the command is not
// stopped by it, and exits 125 once the command is done, whatever the
// command's own status.
func (f *runRedactFlag) wrap(std stdio, run func(stdio) error) error {
	if f == nil || f.engine == "" {
		return run(std)
	}
	if checkEngine(f.engine) != nil {
		return usagef("--redact %q: want one of rules, model, both", f.engine)
	}
	d, err := openDetector(f.engine, redact.Options{})
	if err != nil {
		return fail(err) // nothing has run yet
	}
	d = lockedDetector(d)
	type stream struct {
		r, w *os.File
		dst  io.Writer
		name string
	}
	var streams []stream
	defer func() {
		for _, p := range streams {
			p.w.Close()
		}
	}()
	outputs := []struct {
		dst  *os.File
		name string
	}{{std.out, "standard output"}, {std.err, "standard error"}}
	if mergeSameDestination(std.out, std.err) {
		// One place: one pipe, as 2>&1 gives, so the redactor sees the
		// two streams in the order they are written and a secret split
		// across them is one text.
		outputs = outputs[:1]
		outputs[0].name = "standard output and error"
	}
	for _, o := range outputs {
		r, w, err := os.Pipe()
		if err != nil {
			for _, p := range streams {
				p.r.Close()
			}
			return failf("redact: pipe: %v", err)
		}
		streams = append(streams, stream{r, w, o.dst, o.name})
	}
	rep := &redactReport{err: std.err}
	var wg sync.WaitGroup
	for _, p := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer p.r.Close()
			dst, done := terminalOutput(p.dst)
			defer done()
			rep.pump(p.r, redact.NewWriter(dst, d), p.name)
		}()
	}
	child := stdio{in: readOnlyStdin(std.in), out: streams[0].w, err: streams[len(streams)-1].w}
	runErr := run(child)
	for _, p := range streams {
		p.w.Close()
	}
	wg.Wait()
	if rep.failed() {
		return &exitStatus{code: exitFailure}
	}
	return runErr
}

// mergeSameDestination is sameDestination; a test replaces it to show
// what two pipes into one place let through.
var mergeSameDestination = sameDestination

// terminalOutput returns where to write output bound for dst: dst itself,
// or, when dst is a terminal, a strict escape filter in front of it (see
// package termfilter), since with --redact nothing the command writes
// reaches the terminal but through moat. done ends the filter.
func terminalOutput(dst io.Writer) (w io.Writer, done func()) {
	if f, ok := dst.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		tf := termfilter.New(f, termfilter.Strict)
		return tf, func() { _ = tf.Close() }
	}
	return dst, func() {}
}

// sameDestination reports whether out and err are one open file, pipe or
// terminal (the same device and inode), as after 2>&1 or when both are
// the same terminal.
func sameDestination(out, err *os.File) bool {
	if out == nil || err == nil {
		return false
	}
	a, e1 := out.Stat()
	b, e2 := err.Stat()
	return e1 == nil && e2 == nil && os.SameFile(a, b)
}

// readOnlyStdin returns in, or a pipe fed from it when the command could
// write into in: what the command wrote there (echo $KEY >&0) would reach
// a terminal, an agent, a file or whoever reads the other end without
// passing the redactor. That is any descriptor open for writing (its
// access mode, not its type, decides: a pipe's write end given as stdin
// with 0>&1, a file or FIFO opened with <>), a terminal and a socket. A
// pipe, file or /dev/null opened read-only is passed as it is.
func readOnlyStdin(in *os.File) *os.File {
	if in == nil {
		return nil
	}
	if !openForWriting(in) {
		fi, err := in.Stat()
		if err == nil && fi.Mode()&os.ModeSocket == 0 && !term.IsTerminal(int(in.Fd())) {
			return in
		}
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		// Fail closed: no input rather than a writable one.
		if null, nerr := os.Open(os.DevNull); nerr == nil {
			return null
		}
		return in
	}
	go func() {
		io.Copy(pw, in)
		pw.Close()
	}()
	return pr
}

// lockedDetector serializes calls to d: the stdout and stderr pumps share
// it, and an engine need not be safe for concurrent use.
func lockedDetector(d redact.Detector) redact.Detector {
	var mu sync.Mutex
	return redact.DetectorFunc(func(text string) ([]redact.Finding, error) {
		mu.Lock()
		defer mu.Unlock()
		return d.Detect(text)
	})
}

// redactReport records and prints the first redaction failure.
type redactReport struct {
	mu   sync.Mutex
	err  io.Writer
	fail bool
}

func (r *redactReport) failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fail
}

// pump copies src through w. After a detector failure it says once what
// happened and drains src unread by anyone, so the command runs on. When
// the real stream cannot be written (a closed pipe) it stops reading, so
// the command gets EPIPE as it would without --redact.
func (r *redactReport) pump(src io.Reader, w *redact.Writer, name string) {
	buf := make([]byte, 64<<10)
	var err error
	for {
		n, rerr := src.Read(buf)
		if n > 0 {
			if _, err = w.Write(buf[:n]); err != nil {
				break
			}
		}
		if rerr != nil {
			err = w.Close()
			break
		}
	}
	if err == nil || !errors.Is(err, redact.ErrWriterFailed) {
		return
	}
	r.mu.Lock()
	r.fail = true
	fmt.Fprintf(r.err, "moat: redact: %s stopped: %s\n", name, err)
	r.mu.Unlock()
	io.Copy(io.Discard, src)
}
