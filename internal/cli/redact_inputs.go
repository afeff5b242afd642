package cli

import (
	"github.com/moat-sandbox/moat/internal/hostinput"
	"github.com/moat-sandbox/moat/redact"
	"github.com/moat-sandbox/moat/redact/model"
)

// maxModelBytes bounds what a pin check of a model file or the runtime
// library hashes.
const maxModelBytes = 8 << 30

// checkModelInputs refuses the ONNX Runtime library and the model files
// that the model engine would load on the host when a sandbox could have
// written them (hostinputs.go): the library runs as the user, and the
// model is parsed by native code. What cannot be found is left to the
// engine to report. The engine opens them again by path: a sandbox of
// this run cannot reach them before the engine loads them, since the check
// refuses every place it can write.
func checkModelInputs(opts redact.Options) error {
	if !model.BuiltIn() {
		return nil
	}
	var files []struct{ what, path string }
	if p, err := model.Locate(opts); err == nil {
		for _, f := range append([]string{p.Config, p.Tokenizer, p.TokenizerConfig, p.Calibration, p.ONNX}, p.Sidecars...) {
			if f != "" {
				files = append(files, struct{ what, path string }{"privacy filter model file", f})
			}
		}
	}
	if lib, err := model.FindRuntimeLibrary(opts.RuntimeLibrary, opts.CacheDir); err == nil {
		files = append(files, struct{ what, path string }{"onnx runtime library", lib})
	}
	if len(files) == 0 {
		return nil
	}
	store, err := hostStore()
	if err != nil {
		return err
	}
	for _, f := range files {
		if _, err := hostinput.Check(f.path, hostinput.Options{Subject: f.what, Max: maxModelBytes, Store: store}); err != nil {
			return usagef("%s", err)
		}
	}
	return nil
}
