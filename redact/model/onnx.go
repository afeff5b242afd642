//go:build onnx && cgo

package model

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"sort"
	"strings"
	"sync"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/moat-sandbox/moat/redact"
)

func init() { redact.Register(redact.EngineModel, Open) }

// builtIn is true: this binary has the ONNX engine.
const builtIn = true

var (
	runtimeMu  sync.Mutex
	runtimeLib string
)

// initRuntime loads the ONNX Runtime library once per process.
func initRuntime(lib string) error {
	runtimeMu.Lock()
	defer runtimeMu.Unlock()
	if ort.IsInitialized() {
		if lib != runtimeLib {
			return fmt.Errorf("onnx runtime: already loaded from %s, cannot load %s too", runtimeLib, lib)
		}
		return nil
	}
	ort.SetSharedLibraryPath(lib)
	if err := ort.InitializeEnvironment(); err != nil {
		return fmt.Errorf("onnx runtime %s: %v", lib, err)
	}
	runtimeLib = lib
	return nil
}

// Open opens the model engine from the cache: the assets first (a missing
// one is [ErrNotReady], naming moat setup), then the ONNX Runtime library
// ([FindRuntimeLibrary]), then the session. It never downloads. It is the
// [redact.Opener] registered as "model".
func Open(opts redact.Options) (redact.Detector, error) {
	return OpenEngine(opts)
}

// OpenEngine is [Open] with the concrete type, for callers that want
// [Engine.Close].
func OpenEngine(opts redact.Options) (*Engine, error) {
	if ep := strings.ToLower(opts.ExecutionProvider); ep != "" && ep != "cpu" {
		return nil, fmt.Errorf("privacy filter: execution provider %q: this build has cpu only", opts.ExecutionProvider)
	}
	p, err := Locate(opts)
	if err != nil {
		return nil, err
	}
	a, err := ReadAssets(p)
	if err != nil {
		return nil, err
	}
	lib, err := FindRuntimeLibrary(opts.RuntimeLibrary, opts.CacheDir)
	if err != nil {
		return nil, err
	}
	if err := initRuntime(lib); err != nil {
		return nil, err
	}
	r, err := newONNXRunner(a.ONNX)
	if err != nil {
		return nil, err
	}
	e, err := NewEngine(a.Tokenizer, a.Config, a.Biases, a.TokenLimit, r)
	if err != nil {
		r.Close()
		return nil, err
	}
	e.onClose = r.Close
	return e, nil
}

// onnxRunner is a [Runner] over an ONNX Runtime session.
type onnxRunner struct {
	s      *ort.DynamicAdvancedSession
	output string
	rank   int  // of the logits: 3 ([B,T,C]) or 2 ([T,C], one window a run)
	half   bool // float16 logits
}

// newONNXRunner opens the model after checking its schema: inputs exactly
// input_ids and attention_mask, and an output named logits or a single one.
func newONNXRunner(path string) (*onnxRunner, error) {
	ins, outs, err := ort.GetInputOutputInfo(path)
	if err != nil {
		return nil, fmt.Errorf("privacy filter: %s: %v", path, err)
	}
	names := make([]string, len(ins))
	for i, in := range ins {
		names[i] = in.Name
	}
	sort.Strings(names)
	if strings.Join(names, ",") != "attention_mask,input_ids" {
		return nil, fmt.Errorf("privacy filter: model inputs %v: want exactly attention_mask and input_ids", names)
	}
	var out *ort.InputOutputInfo
	for i := range outs {
		if outs[i].Name == "logits" {
			out = &outs[i]
		}
	}
	if out == nil && len(outs) == 1 {
		out = &outs[0]
	}
	if out == nil {
		return nil, fmt.Errorf("privacy filter: model has %d outputs and none named logits", len(outs))
	}
	r := &onnxRunner{output: out.Name, rank: len(out.Dimensions)}
	switch out.DataType {
	case ort.TensorElementDataTypeFloat:
	case ort.TensorElementDataTypeFloat16:
		r.half = true
	default:
		return nil, fmt.Errorf("privacy filter: logits of type %v: want float32 or float16", out.DataType)
	}
	if r.rank != 2 && r.rank != 3 {
		return nil, fmt.Errorf("privacy filter: logits of rank %d: want [batch, tokens, %d] or [tokens, %d]", r.rank, NumLabels, NumLabels)
	}
	if c := out.Dimensions[r.rank-1]; c > 0 && c != NumLabels {
		return nil, fmt.Errorf("privacy filter: logits have %d classes, want %d", c, NumLabels)
	}
	opts, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("privacy filter: %v", err)
	}
	defer opts.Destroy()
	if err := opts.SetGraphOptimizationLevel(ort.GraphOptimizationLevelEnableAll); err != nil {
		return nil, fmt.Errorf("privacy filter: %v", err)
	}
	if err := opts.SetIntraOpNumThreads(min(4, runtime.NumCPU())); err != nil {
		return nil, fmt.Errorf("privacy filter: %v", err)
	}
	s, err := ort.NewDynamicAdvancedSession(path, []string{"input_ids", "attention_mask"}, []string{r.output}, opts)
	if err != nil {
		return nil, fmt.Errorf("privacy filter: %s: %v", path, err)
	}
	r.s = s
	return r, nil
}

// Close ends the session.
func (r *onnxRunner) Close() error {
	if r.s == nil {
		return nil
	}
	err := r.s.Destroy()
	r.s = nil
	return err
}

// Run implements [Runner].
func (r *onnxRunner) Run(ids, mask []int64, batch, seqLen int) ([]float32, error) {
	if r.rank == 2 && batch > 1 {
		var all []float32
		for k := 0; k < batch; k++ {
			row, err := r.Run(ids[k*seqLen:(k+1)*seqLen], mask[k*seqLen:(k+1)*seqLen], 1, seqLen)
			if err != nil {
				return nil, err
			}
			all = append(all, row...)
		}
		return all, nil
	}
	shape := ort.NewShape(int64(batch), int64(seqLen))
	idsT, err := ort.NewTensor(shape, ids)
	if err != nil {
		return nil, err
	}
	defer idsT.Destroy()
	maskT, err := ort.NewTensor(shape, mask)
	if err != nil {
		return nil, err
	}
	defer maskT.Destroy()
	want := batch * seqLen * NumLabels
	outShape := ort.NewShape(int64(batch), int64(seqLen), NumLabels)
	if r.rank == 2 {
		outShape = ort.NewShape(int64(seqLen), NumLabels)
	}
	var out ort.Value
	if r.half {
		t, err := ort.NewCustomDataTensor(outShape, make([]byte, 2*want), ort.TensorElementDataTypeFloat16)
		if err != nil {
			return nil, err
		}
		out = t
	}
	outputs := []ort.Value{out}
	if err := r.s.Run([]ort.Value{idsT, maskT}, outputs); err != nil {
		if outputs[0] != nil {
			outputs[0].Destroy()
		}
		return nil, err
	}
	defer outputs[0].Destroy()
	if got := outputs[0].GetShape().FlattenedSize(); got != int64(want) {
		return nil, fmt.Errorf("logits of shape %v: want %v", outputs[0].GetShape(), outShape)
	}
	switch v := outputs[0].(type) {
	case *ort.Tensor[float32]:
		return append([]float32(nil), v.GetData()...), nil
	case *ort.CustomDataTensor:
		b := v.GetData()
		f := make([]float32, want)
		for i := range f {
			f[i] = halfToFloat(binary.LittleEndian.Uint16(b[2*i:]))
		}
		return f, nil
	}
	return nil, fmt.Errorf("logits of unexpected type %T", outputs[0])
}

// halfToFloat converts an IEEE 754 half-precision value.
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal
		f := float32(frac) / 1024 / 16384
		if sign != 0 {
			f = -f
		}
		return f
	case exp == 31:
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | frac<<13)
}
