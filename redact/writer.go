package redact

import (
	"bytes"
	"errors"
	"io"
	"unicode/utf8"
)

// Default limits of [NewWriter].
const (
	// DefaultMaxLine is how long a line may grow before the writer cuts it
	// at a space or punctuation instead of waiting for its newline.
	DefaultMaxLine = 64 << 10
	// DefaultMaxHold is how much the writer holds back while a finding
	// stays open at the end of what it has (a PEM block without its END
	// line) before it emits the held text redacted.
	DefaultMaxHold = 1 << 20
)

// holdRescan is how much held text the writer re-examines on every new
// line; past it, it waits until the buffer has doubled.
const holdRescan = 4 << 10

// ErrWriterFailed is matched by [errors.Is] for every write to a redacting
// writer after its detector failed: the raw stream is no longer forwarded.
var ErrWriterFailed = errors.New("redact: stream stopped after a detector failure")

// WriterOption configures [NewWriter]. A nil WriterOption panics when applied.
type WriterOption func(*writerConfig)

type writerConfig struct {
	maxLine int
	maxHold int
}

// WithMaxLine sets how long an unterminated line may grow before it is cut
// (default [DefaultMaxLine]); n < 256 means 256.
func WithMaxLine(n int) WriterOption {
	return func(c *writerConfig) { c.maxLine = max(n, 256) }
}

// WithMaxHold sets the most the writer holds back for a finding that is
// still open at the end of the buffer (default [DefaultMaxHold]); it is
// raised to at least twice the line limit.
func WithMaxHold(n int) WriterOption {
	return func(c *writerConfig) { c.maxHold = n }
}

// Writer is a redacting stream made by [NewWriter]. The zero value is not
// usable.
type Writer struct {
	w   io.Writer
	d   Detector
	cfg writerConfig
	buf []byte
	// next is the buffer length at which the writer looks again when the
	// last pass had to hold text back for an open finding; it doubles the
	// held size so a long open finding costs linear time, not quadratic.
	next int
	err  error
	// ctx is detection context carried over from the last emit: the
	// end of a long line cut inside it (so a key word emitted before the
	// cut still marks its value after it), or a synthetic BEGIN line after
	// a forced flush inside an open PEM block. It is never emitted again.
	ctx string
}

// NewWriter returns a writer that passes what is written to w with every
// finding of d replaced by its [Marker].
//
// The writer works line by line: it emits text only up to a newline (or,
// for a line longer than the line limit, up to a space or punctuation
// near the limit), and never cuts through a finding, so a secret split
// across writes is seen whole. If a finding reaches the end of what is
// buffered (an unfinished PEM block) the writer holds the text back until
// the finding ends or the hold limit is reached, then emits it with the
// finding redacted. Memory stays within about twice the hold limit (the
// writer looks again only when held text has doubled, so a long open
// finding costs linear time) plus one write.
//
// Invariant: for a detector whose findings never cross a newline except
// where they run to the end of the text (the rules engine: only PEM blocks
// cross lines), the output equals Apply(text, d.Detect(text)) on the whole
// text written, provided no line exceeds the line limit and no finding
// exceeds the hold limit. Past those limits the output still never
// contains the raw bytes of a span that d finds in the text the writer
// looked at: a long line cut inside it carries its last bytes (8 KiB)
// into the next detection, so a key word before the cut still marks its
// value after it, and after a forced flush inside an open PEM block the
// following body lines stay redacted up to the block's end.
//
// If d fails, the writer writes nothing more (not even what it holds) and
// returns the error, wrapped to match [ErrWriterFailed], from that and
// every later call. Close emits what is held; it does not close w.
func NewWriter(w io.Writer, d Detector, opts ...WriterOption) *Writer {
	cfg := writerConfig{maxLine: DefaultMaxLine, maxHold: DefaultMaxHold}
	for _, o := range opts {
		o(&cfg)
	}
	cfg.maxHold = max(cfg.maxHold, 2*cfg.maxLine)
	return &Writer{w: w, d: d, cfg: cfg}
}

// Write buffers p and emits every complete line redacted. It returns
// len(p) unless the detector or the underlying writer failed.
func (x *Writer) Write(p []byte) (int, error) {
	if x.err != nil {
		return 0, x.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	newline := bytes.IndexByte(p, '\n') >= 0
	x.buf = append(x.buf, p...)
	if len(x.buf) < x.next {
		return len(p), nil
	}
	if newline || len(x.buf) > x.cfg.maxLine {
		if err := x.process(false); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Close emits the rest of the buffer redacted. It does not close the
// underlying writer. After a detector failure it returns that failure.
func (x *Writer) Close() error {
	if x.err != nil {
		return x.err
	}
	if len(x.buf) > 0 {
		if err := x.process(true); err != nil {
			return err
		}
	}
	x.err = errClosed
	return nil
}

var errClosed = errors.New("redact: write to a closed writer")

// process examines the buffer and emits as much as is safe: everything when
// final, otherwise up to a cut that no finding crosses.
func (x *Writer) process(final bool) error {
	whole := x.ctx + string(x.buf)
	found, err := x.d.Detect(whole)
	if err != nil {
		x.buf = nil
		x.err = &failedError{err: err}
		return x.err
	}
	spans := dropContext(Normalize(whole, Widen(whole, found)), len(x.ctx))
	text := whole[len(x.ctx):]
	cut := len(text)
	inPEM := false // a forced flush inside an open PEM block
	if !final {
		cut = x.cutPoint(text, spans)
		if cut == 0 && len(text) > x.cfg.maxHold {
			// A finding has stayed open past the hold limit: emit what is
			// held with the findings redacted, and go on.
			cut = len(text)
			// Past it, go on redacting the block's lines up to its END.
			inPEM = openPEM(found, len(whole))
		}
	}
	if cut > 0 {
		var emit []Finding
		for _, s := range spans {
			if s.Start >= cut {
				break
			}
			if s.End > cut {
				s.End = cut // only on a forced flush
			}
			emit = append(emit, s)
		}
		if _, err := io.WriteString(x.w, applyNormalized(text[:cut], emit)); err != nil {
			x.buf = nil
			x.err = err
			return err
		}
		x.ctx = carryContext(x.ctx, text[:cut])
		if inPEM {
			x.ctx = pemContext
		}
		x.buf = append(x.buf[:0], x.buf[cut:]...)
	}
	x.next = 0
	if !final && len(x.buf) > holdRescan {
		x.next = 2 * len(x.buf)
	}
	return nil
}

// cutPoint returns how much of text can be emitted now: up to the last
// newline, or for a long unterminated tail up to a word break near the
// line limit, moved back before any finding that crosses it.
func (x *Writer) cutPoint(text string, spans []Finding) int {
	cut := 0
	if i := lastIndexByte(text, '\n'); i >= 0 {
		cut = i + 1
	}
	if tail := len(text) - cut; tail > x.cfg.maxLine {
		cut = wordBreak(text, cut, len(text)-x.cfg.maxLine/2)
	}
	// Move the cut before every finding that crosses it, or that runs to
	// the end of what is buffered and so may still grow (an unfinished
	// PEM block).
	for moved := true; moved; {
		moved = false
		for _, s := range spans {
			if s.Start < cut && (s.End > cut || s.End == len(text)) {
				cut = s.Start
				moved = true
			}
		}
	}
	return cut
}

// wordBreak returns a cut in (lo, hi] just after a space or punctuation,
// searching back from hi, or hi itself (moved back to a UTF-8 boundary)
// when the run has no break.
func wordBreak(text string, lo, hi int) int {
	for i := hi; i > lo; i-- {
		if !tokenByte(text[i-1]) {
			return i
		}
	}
	for hi > lo && !utf8.RuneStart(text[hi]) {
		hi--
	}
	return hi
}

// tokenByte reports whether c may be part of a secret-looking token.
func tokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '-' || c == '_' || c == '+' || c == '/' || c == '=' || c == '.' || c >= 0x80
}

func lastIndexByte(s string, c byte) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// failedError is a detector failure seen by a [Writer].
type failedError struct{ err error }

func (e *failedError) Error() string   { return ErrWriterFailed.Error() + ": " + e.err.Error() }
func (e *failedError) Unwrap() []error { return []error{ErrWriterFailed, e.err} }
