package redact

import (
	"errors"
	"fmt"
	"sort"
	"sync"
)

// Engine names accepted by [Open].
const (
	// EngineRules is the pure-Go pattern engine, always registered.
	EngineRules = "rules"
	// EngineModel is the ONNX model engine, registered by package
	// redact/model when the binary is built with [ModelBuildTag].
	EngineModel = "model"
)

// ModelBuildTag is the Go build tag that compiles the model engine in
// (package redact/model needs cgo): go build -tags onnx ./cmd/moat.
const ModelBuildTag = "onnx"

// ErrEngineUnavailable is matched by [errors.Is] when [Open] is asked for an
// engine this binary was built without.
var ErrEngineUnavailable = errors.New("redact engine unavailable")

// Options configure an engine opened with [Open]. The zero value asks for
// each engine's defaults; the rules engine ignores every field.
type Options struct {
	// CacheDir is the model cache root (a Hugging Face hub cache); "" means
	// $HF_HOME/hub, or ~/.cache/huggingface/hub.
	CacheDir string
	// Variant is the model's ONNX variant (q4, q4f16, quantized, fp16,
	// full); "" means q4.
	Variant string
	// Revision is the model's 40-hex-digit commit; "" means the pinned one.
	Revision string
	// ExecutionProvider is the ONNX execution provider; "" means cpu.
	ExecutionProvider string
	// RuntimeLibrary is the path of libonnxruntime; "" means the
	// environment variable, then the cache.
	RuntimeLibrary string
}

// Opener opens an engine. It must not download anything. A nil Opener is
// refused by [Register].
type Opener func(Options) (Detector, error)

var (
	enginesMu sync.RWMutex
	engines   = map[string]Opener{
		EngineRules: func(Options) (Detector, error) { return NewRules(), nil },
	}
)

// Register makes an engine available to [Open] under name. It is meant to
// be called from an init function; registering a name twice, an empty name
// or a nil opener panics.
func Register(name string, open Opener) {
	if name == "" || open == nil {
		panic("redact: Register with an empty name or nil opener")
	}
	enginesMu.Lock()
	defer enginesMu.Unlock()
	if _, dup := engines[name]; dup {
		panic("redact: Register called twice for engine " + name)
	}
	engines[name] = open
}

// Engines returns the names of the registered engines, sorted.
func Engines() []string {
	enginesMu.RLock()
	defer enginesMu.RUnlock()
	names := make([]string, 0, len(engines))
	for n := range engines {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Open opens the engine called name. An engine this binary lacks is an
// error matching [ErrEngineUnavailable]; for "model" its message names the
// build tag and `moat setup`. Every engine sees through escape sequences
// and invisible characters (see [SeeThrough]).
func Open(name string, opts Options) (Detector, error) {
	enginesMu.RLock()
	open := engines[name]
	enginesMu.RUnlock()
	if open != nil {
		d, err := open(opts)
		if err != nil || name == EngineRules {
			return d, err // the rules see through escapes themselves
		}
		return SeeThrough(d), nil
	}
	if name == EngineModel {
		return nil, fmt.Errorf("%w: engine %q is not built into this binary: build moat with cgo and -tags %s, then run moat setup to fetch the model", ErrEngineUnavailable, name, ModelBuildTag)
	}
	return nil, fmt.Errorf("%w: unknown engine %q (have %v)", ErrEngineUnavailable, name, Engines())
}

// Union returns a Detector whose findings are those of every d in ds; the
// first error stops it. Apply unions overlapping spans, so the engines may
// disagree on extents.
func Union(ds ...Detector) Detector {
	return DetectorFunc(func(text string) ([]Finding, error) {
		var all []Finding
		for _, d := range ds {
			f, err := d.Detect(text)
			if err != nil {
				return nil, err
			}
			all = append(all, f...)
		}
		return all, nil
	})
}
