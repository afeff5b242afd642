package model

import (
	"fmt"
	"sort"
	"strings"
)

// Repository is the Hugging Face repository of the privacy filter model.
const Repository = "openai/privacy-filter"

// Revision is the pinned commit of [Repository] whose assets moat setup
// fetches and the engine loads; its decoding matches Heimdall's on it.
const Revision = "7ffa9a043d54d1be65afb281eddf0ffbe629385b"

// Variant names one ONNX export of the model. The zero value is not a
// variant; [ParseVariant] maps "" to [DefaultVariant].
type Variant string

// The variants the repository publishes.
const (
	VariantQ4        Variant = "q4"
	VariantQ4F16     Variant = "q4f16"
	VariantQuantized Variant = "quantized"
	VariantFP16      Variant = "fp16"
	VariantFull      Variant = "full"
)

// DefaultVariant is the variant used when none is named.
const DefaultVariant = VariantQ4

// Asset file names that every variant needs, relative to the repository root.
const (
	ConfigFile          = "config.json"
	TokenizerFile       = "tokenizer.json"
	TokenizerConfigFile = "tokenizer_config.json"
	CalibrationFile     = "viterbi_calibration.json"
)

// variantFiles lists each variant's ONNX file followed by its external-data
// sidecars, which must sit beside it.
var variantFiles = map[Variant][]string{
	VariantQ4:        {"onnx/model_q4.onnx", "onnx/model_q4.onnx_data"},
	VariantQ4F16:     {"onnx/model_q4f16.onnx", "onnx/model_q4f16.onnx_data"},
	VariantQuantized: {"onnx/model_quantized.onnx", "onnx/model_quantized.onnx_data"},
	VariantFP16:      {"onnx/model_fp16.onnx", "onnx/model_fp16.onnx_data", "onnx/model_fp16.onnx_data_1"},
	VariantFull:      {"onnx/model.onnx", "onnx/model.onnx_data", "onnx/model.onnx_data_1", "onnx/model.onnx_data_2"},
}

// Variants returns every variant name, sorted.
func Variants() []Variant {
	out := make([]Variant, 0, len(variantFiles))
	for v := range variantFiles {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// VariantNames returns the variant names joined by sep, for help text.
func VariantNames(sep string) string {
	vs := Variants()
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = string(v)
	}
	return strings.Join(names, sep)
}

// ParseVariant returns the variant called s; "" is [DefaultVariant].
func ParseVariant(s string) (Variant, error) {
	if s == "" {
		return DefaultVariant, nil
	}
	v := Variant(strings.ToLower(strings.TrimSpace(s)))
	if _, ok := variantFiles[v]; !ok {
		return "", fmt.Errorf("model variant %q: want one of %s", s, VariantNames(", "))
	}
	return v, nil
}

// ONNXFile returns the variant's ONNX file, relative to the repository root,
// or "" for an unknown variant.
func (v Variant) ONNXFile() string {
	if fs := variantFiles[v]; len(fs) > 0 {
		return fs[0]
	}
	return ""
}

// Sidecars returns the variant's external-data files, relative to the
// repository root.
func (v Variant) Sidecars() []string {
	fs := variantFiles[v]
	if len(fs) < 2 {
		return nil
	}
	return append([]string(nil), fs[1:]...)
}

// Files returns every file the variant needs, relative to the repository
// root, without duplicates, in download order: the small JSON assets first,
// then the ONNX file and its sidecars. An unknown variant has none.
func (v Variant) Files() []string {
	fs, ok := variantFiles[v]
	if !ok {
		return nil
	}
	all := append([]string{ConfigFile, TokenizerFile, TokenizerConfigFile, CalibrationFile}, fs...)
	seen := make(map[string]bool, len(all))
	out := all[:0]
	for _, f := range all {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

// ValidRevision reports whether rev is a full commit id: 40 lowercase hex
// digits.
func ValidRevision(rev string) bool {
	if len(rev) != 40 {
		return false
	}
	for _, c := range rev {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// ParseRevision returns rev, or [Revision] for "", refusing anything but a
// full commit id: a branch or tag name could move under the pinned decoding.
func ParseRevision(rev string) (string, error) {
	if rev == "" {
		return Revision, nil
	}
	r := strings.ToLower(strings.TrimSpace(rev))
	if !ValidRevision(r) {
		return "", fmt.Errorf("model revision %q: want a 40-hex-digit commit id", rev)
	}
	return r, nil
}
