package model

import (
	"errors"
	"fmt"
	"os"

	"github.com/moat-sandbox/moat/redact"
)

// Runner runs the token-classification model on one batch: ids and mask
// are batch×seqLen row-major, and the result is batch×seqLen×[NumLabels]
// logits, row-major. The ONNX runtime is one Runner; tests use others.
type Runner interface {
	Run(ids, mask []int64, batch, seqLen int) ([]float32, error)
}

// RunnerFunc adapts a function to [Runner]. A nil RunnerFunc panics when
// called.
type RunnerFunc func(ids, mask []int64, batch, seqLen int) ([]float32, error)

// Run calls f.
func (f RunnerFunc) Run(ids, mask []int64, batch, seqLen int) ([]float32, error) {
	return f(ids, mask, batch, seqLen)
}

// DefaultBatch is how many windows one model run takes at most.
const DefaultBatch = 8

// Engine is the privacy filter's pipeline around a [Runner]: tokenize,
// plan overlapping windows, run the model, Viterbi-decode each window, map
// token spans to bytes and merge them. It implements [redact.Detector] and
// is safe for use by one goroutine at a time (the Runner's rule). The zero
// value is not usable; use [NewEngine] or [LoadEngine].
type Engine struct {
	tok     *Tokenizer
	cfg     Config
	dec     *Decoder
	limit   int
	run     Runner
	batch   int
	onClose func() error
}

// NewEngine assembles an engine from parsed assets. limit is the window
// size in tokens (model_max_length), at least 3.
func NewEngine(tok *Tokenizer, cfg Config, biases Biases, limit int, run Runner) (*Engine, error) {
	if tok == nil || run == nil {
		return nil, errors.New("privacy filter: no tokenizer or runner")
	}
	if len(cfg.Labels) != NumLabels {
		return nil, fmt.Errorf("privacy filter: %d labels, want %d", len(cfg.Labels), NumLabels)
	}
	if limit < 3 {
		return nil, fmt.Errorf("privacy filter: token limit %d: want at least 3", limit)
	}
	return &Engine{tok: tok, cfg: cfg, dec: NewDecoder(cfg.Labels, biases), limit: limit, run: run, batch: DefaultBatch}, nil
}

// Assets are the parsed JSON assets of one snapshot. The zero value is not
// usable; use [ReadAssets].
type Assets struct {
	// Tokenizer is read from tokenizer.json.
	Tokenizer *Tokenizer
	// Config holds the labels and the padding id of config.json.
	Config Config
	// Biases are the default operating point of viterbi_calibration.json.
	Biases Biases
	// TokenLimit is model_max_length from tokenizer_config.json.
	TokenLimit int
	// ONNX is the path of the variant's ONNX file.
	ONNX string
	// SnapshotDir is the cache directory that holds them.
	SnapshotDir string
}

// ReadAssets parses the JSON assets that [Locate] found.
func ReadAssets(p Paths) (Assets, error) {
	read := func(name, path string) ([]byte, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("privacy filter: %s: %v", name, err)
		}
		return b, nil
	}
	var a Assets
	b, err := read(ConfigFile, p.Config)
	if err != nil {
		return a, err
	}
	if a.Config, err = ParseConfig(b); err != nil {
		return a, fmt.Errorf("privacy filter: %v", err)
	}
	if b, err = read(CalibrationFile, p.Calibration); err != nil {
		return a, err
	}
	if a.Biases, err = ParseCalibration(b); err != nil {
		return a, fmt.Errorf("privacy filter: %v", err)
	}
	if b, err = read(TokenizerConfigFile, p.TokenizerConfig); err != nil {
		return a, err
	}
	if a.TokenLimit, err = ParseMaxLength(b); err != nil {
		return a, fmt.Errorf("privacy filter: %v", err)
	}
	if b, err = read(TokenizerFile, p.Tokenizer); err != nil {
		return a, err
	}
	if a.Tokenizer, err = ParseTokenizer(b); err != nil {
		return a, fmt.Errorf("privacy filter: %v", err)
	}
	a.ONNX, a.SnapshotDir = p.ONNX, p.Dir
	return a, nil
}

// SetBatch sets how many windows one model run takes (at least 1).
func (e *Engine) SetBatch(n int) { e.batch = max(1, n) }

// TokenLimit returns the window size in tokens.
func (e *Engine) TokenLimit() int { return e.limit }

// Close releases the runner, if the engine owns it.
func (e *Engine) Close() error {
	if e.onClose != nil {
		f := e.onClose
		e.onClose = nil
		return f()
	}
	return nil
}

// Detect implements [redact.Detector]: it returns the merged spans of text
// as findings with the model's categories and Rule "model". Text with no
// tokens has no findings.
func (e *Engine) Detect(text string) ([]redact.Finding, error) {
	spans, err := e.Spans(text)
	if err != nil {
		return nil, err
	}
	out := make([]redact.Finding, len(spans))
	for i, s := range spans {
		out[i] = redact.Finding{Start: s.Start, End: s.End, Category: s.Category, Rule: "model"}
	}
	return out, nil
}

// Redact returns text with each detected span replaced by
// [REDACTED:<category>], through [redact.Redact]: Heimdall's apply_spans
// on valid UTF-8, where a span next to a stray byte widens rather than
// being dropped.
func (e *Engine) Redact(text string) (string, error) {
	f, err := e.Detect(text)
	if err != nil {
		return "", err
	}
	return redact.Redact(text, f), nil
}

// Spans returns the merged byte spans the model finds in text.
func (e *Engine) Spans(text string) ([]ByteSpan, error) {
	enc, err := e.tok.Encode(text)
	if err != nil {
		return nil, err
	}
	windows, err := PlanWindows(len(enc.IDs), e.limit)
	if err != nil {
		return nil, err
	}
	var spans []ByteSpan
	for i := 0; i < len(windows); i += e.batch {
		batch := windows[i:min(i+e.batch, len(windows))]
		logits, err := e.runBatch(enc.IDs, batch)
		if err != nil {
			return nil, err
		}
		for k, w := range batch {
			path := e.dec.Decode(logits[k])
			for _, ts := range PathSpans(path, e.cfg.Labels, logits[k]) {
				ts.Start += w.Start
				ts.End += w.Start
				if bs, ok := ToBytes(ts, enc.Offsets); ok {
					spans = append(spans, bs)
				}
			}
		}
	}
	return MergeSpans(spans), nil
}

// runBatch pads the windows to the longest, runs the model and returns
// each window's logits, one row per real token.
func (e *Engine) runBatch(ids []int64, ws []Window) ([][][]float32, error) {
	T := 0
	for _, w := range ws {
		T = max(T, w.End-w.Start)
	}
	B := len(ws)
	in := make([]int64, B*T)
	mask := make([]int64, B*T)
	for k, w := range ws {
		row := in[k*T : (k+1)*T]
		for t := range row {
			row[t] = e.cfg.PadTokenID
		}
		copy(row, ids[w.Start:w.End])
		for t := 0; t < w.End-w.Start; t++ {
			mask[k*T+t] = 1
		}
	}
	flat, err := e.run.Run(in, mask, B, T)
	if err != nil {
		return nil, fmt.Errorf("privacy filter: model: %w", err)
	}
	if len(flat) != B*T*NumLabels {
		return nil, fmt.Errorf("privacy filter: model returned %d logits, want %d×%d×%d", len(flat), B, T, NumLabels)
	}
	out := make([][][]float32, B)
	for k, w := range ws {
		n := w.End - w.Start
		out[k] = make([][]float32, n)
		for t := 0; t < n; t++ {
			off := (k*T + t) * NumLabels
			out[k][t] = flat[off : off+NumLabels : off+NumLabels]
		}
	}
	return out, nil
}

// BuiltIn reports whether this binary has the ONNX engine (cgo and the
// onnx build tag); without it, moat setup still fetches the assets.
func BuiltIn() bool { return builtIn }
