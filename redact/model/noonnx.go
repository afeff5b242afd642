//go:build !onnx || !cgo

package model

// builtIn is false: this binary was built without cgo or the onnx tag, so
// it registers no "model" engine and [redact.Open] says how to get one.
const builtIn = false
