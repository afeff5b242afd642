package model

import (
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/redact"
)

func TestRevisionIsPinned(t *testing.T) {
	if !ValidRevision(Revision) {
		t.Fatalf("Revision %q is not 40 hex digits", Revision)
	}
}

func TestVariantFiles(t *testing.T) {
	owner := map[string]Variant{}
	for _, v := range Variants() {
		files := v.Files()
		seen := map[string]bool{}
		for _, f := range files {
			if seen[f] {
				t.Errorf("%s lists %s twice", v, f)
			}
			seen[f] = true
		}
		for _, req := range []string{ConfigFile, TokenizerFile, TokenizerConfigFile, CalibrationFile, v.ONNXFile()} {
			if !seen[req] {
				t.Errorf("%s lacks %s", v, req)
			}
		}
		for _, f := range append([]string{v.ONNXFile()}, v.Sidecars()...) {
			if !strings.HasPrefix(f, "onnx/") || !strings.HasPrefix(f, v.ONNXFile()) {
				t.Errorf("%s: %s is not beside %s", v, f, v.ONNXFile())
			}
			if o, dup := owner[f]; dup {
				t.Errorf("%s is in both %s and %s", f, o, v)
			}
			owner[f] = v
		}
		if len(v.Sidecars()) == 0 {
			t.Errorf("%s has no external-data sidecar", v)
		}
	}
	if DefaultVariant != VariantQ4 || VariantQ4.ONNXFile() != "onnx/model_q4.onnx" {
		t.Errorf("default variant %s, file %s", DefaultVariant, DefaultVariant.ONNXFile())
	}
	if got := len(VariantFull.Sidecars()); got != 3 {
		t.Errorf("full has %d sidecars, want 3", got)
	}
	if got := len(VariantFP16.Sidecars()); got != 2 {
		t.Errorf("fp16 has %d sidecars, want 2", got)
	}
	if Variant("q8").Files() != nil || Variant("q8").ONNXFile() != "" {
		t.Error("an unknown variant has files")
	}
}

func TestParseVariantAndRevision(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Variant
		ok   bool
	}{{"", VariantQ4, true}, {"q4", VariantQ4, true}, {"FP16", VariantFP16, true}, {"full", VariantFull, true}, {"q4f16", VariantQ4F16, true}, {"quantized", VariantQuantized, true}, {"q8", "", false}, {"onnx/model.onnx", "", false}} {
		got, err := ParseVariant(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseVariant(%q) = %q %v", tc.in, got, err)
		}
	}
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{{"", Revision, true}, {Revision, Revision, true}, {strings.ToUpper(Revision), Revision, true}, {"main", "", false}, {Revision[:39], "", false}, {Revision + "0", "", false}, {"../../../../etc/passwd0000000000000000000", "", false}} {
		got, err := ParseRevision(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseRevision(%q) = %q %v", tc.in, got, err)
		}
	}
}

func TestLocateNamesMoatSetup(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		opts redact.Options
		want string
	}{
		{redact.Options{CacheDir: dir}, "run: moat setup --cache-dir " + dir},
		{redact.Options{CacheDir: dir, Variant: "fp16"}, "moat setup --variant fp16 --cache-dir"},
	} {
		_, err := Locate(tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "config.json") {
			t.Errorf("Locate(%+v): %v, want it to name config.json and %q", tc.opts, err, tc.want)
		}
	}
	if _, err := Locate(redact.Options{CacheDir: dir, Variant: "q8"}); err == nil || !strings.Contains(err.Error(), "variant") {
		t.Errorf("bad variant: %v", err)
	}
	if _, err := Locate(redact.Options{CacheDir: dir, Revision: "main"}); err == nil || !strings.Contains(err.Error(), "revision") {
		t.Errorf("branch revision: %v", err)
	}
}
