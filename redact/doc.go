// Package redact finds secrets and personal data in text and replaces them
// with markers such as [REDACTED:secret].
//
// A [Detector] returns [Finding]s: byte spans with a category. [Apply]
// replaces the spans of a text with markers. [NewWriter] does the same for a
// stream with bounded memory, holding back a tail so that a secret split
// across two writes is still caught.
//
// Engines are opened by name with [Open]. The "rules" engine ([NewRules])
// is pure Go, always built in and needs no setup. The "model" engine (the
// ONNX token-classification model openai/privacy-filter) lives in package
// redact/model, needs cgo and the build tag named by [ModelBuildTag], and
// its assets are fetched once with `moat setup`; a binary built without it
// answers Open("model", ...) with an error that says how to get it.
//
// The package does not import moat, so any program can use it.
package redact
