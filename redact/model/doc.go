// Package model is the privacy filter's "model" engine for package redact:
// the ONNX token-classification model openai/privacy-filter at a pinned
// revision, decoded as Heimdall decodes it, so that outputs compare on the
// same revision.
//
// The pipeline: the model's tokenizer.json (an o200k-style byte-level BPE)
// with byte offsets; windows of model_max_length tokens that overlap by
// min(256, (limit-1)/2); the model's 33 BIOES logits per token; Viterbi
// over the legal BIOES transitions with the biases of
// viterbi_calibration.json; spans mapped to bytes and merged; and
// [REDACTED:<category>] markers through [redact.Redact].
//
// Everything but the ONNX session is pure Go and always built. The session
// uses github.com/yalue/onnxruntime_go, which needs cgo and dlopens the ONNX
// Runtime library; it is compiled only with the build tag
// [redact.ModelBuildTag] ("onnx") and CGO_ENABLED=1, and then registers
// the engine as "model". Without it the binary stays static and
// redact.Open("model") says how to get the engine.
//
// [Setup] (moat setup) is the only code that downloads: it fetches the
// assets into the Hugging Face hub cache. The engine loads from the cache
// only and names moat setup when something is missing ([ErrNotReady]).
package model
