package model

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/hfhub"
	"github.com/moat-sandbox/moat/redact"
)

// fixtureEngine writes the fixture assets into a fake hub cache (with
// placeholder ONNX files), finds them with Locate as the engine does and
// returns an engine over the Go fixture model.
func fixtureEngine(t *testing.T, limit int) (*Engine, *int) {
	t.Helper()
	root := t.TempDir()
	snap := hfhub.Cache{Root: root}.SnapshotDir(Repository, Revision)
	tok, _ := writeFixtureAssets(t, snap, limit)
	for _, f := range append([]string{DefaultVariant.ONNXFile()}, DefaultVariant.Sidecars()...) {
		os.MkdirAll(filepath.Join(snap, "onnx"), 0o755)
		os.WriteFile(filepath.Join(snap, f), []byte("placeholder"), 0o644)
	}
	p, err := Locate(redact.Options{CacheDir: root})
	if err != nil {
		t.Fatal(err)
	}
	a, err := ReadAssets(p)
	if err != nil {
		t.Fatal(err)
	}
	if a.TokenLimit != limit || a.ONNX != filepath.Join(snap, "onnx", "model_q4.onnx") {
		t.Fatalf("assets: limit %d, onnx %s", a.TokenLimit, a.ONNX)
	}
	calls := new(int)
	run := tableRunner(labelTable(t, tok))
	e, err := NewEngine(a.Tokenizer, a.Config, a.Biases, a.TokenLimit, RunnerFunc(func(ids, mask []int64, b, T int) ([]float32, error) {
		*calls++
		for k := 0; k < b; k++ {
			if mask[k*T] != 1 {
				t.Errorf("window %d starts with padding", k)
			}
		}
		return run(ids, mask, b, T)
	}))
	if err != nil {
		t.Fatal(err)
	}
	return e, calls
}

func TestEngineRedacts(t *testing.T) {
	e, _ := fixtureEngine(t, 512)
	tests := []struct{ in, want string }{
		{"my email is alice@example.com ok", "my email is [REDACTED:private_email] ok"},
		{"call bob soon", "call [REDACTED:private_person] soon"},
		{"nothing here", "nothing here"},
		{"", ""},
	}
	for _, tc := range tests {
		got, err := e.Redact(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Redact(%q) = %q %v, want %q", tc.in, got, err, tc.want)
		}
	}
	f, _ := e.Detect("my email is alice@example.com ok")
	if len(f) != 1 || f[0].Category != redact.CategoryPrivateEmail || f[0].Rule != "model" {
		t.Errorf("findings %+v", f)
	}
}

// TestEngineLongInput is PF9/PF10 on the fixture model: with a token limit
// of 32, the spans near the tail are found in later windows and the tail
// survives, whatever the batch size.
func TestEngineLongInput(t *testing.T) {
	text := longText(40)
	var outs []string
	for _, batch := range []int{1, 3, 8} {
		e, calls := fixtureEngine(t, 32)
		e.SetBatch(batch)
		enc, _ := e.tok.Encode(text)
		ws, _ := PlanWindows(len(enc.IDs), 32)
		if len(ws) < 5 {
			t.Fatalf("only %d windows for %d tokens", len(ws), len(enc.IDs))
		}
		got, err := e.Redact(text)
		if err != nil {
			t.Fatal(err)
		}
		if want := (len(ws) + batch - 1) / batch; *calls != want {
			t.Errorf("batch %d: %d model runs, want %d", batch, *calls, want)
		}
		if !strings.HasSuffix(got, "my email is [REDACTED:private_email], call [REDACTED:private_person] soon. TAIL-MARKER-END") {
			t.Errorf("batch %d: tail %q", batch, got[max(0, len(got)-120):])
		}
		if strings.Contains(got, "alice") || strings.Contains(got, "bob") {
			t.Errorf("batch %d: leaked %q", batch, got)
		}
		outs = append(outs, got)
	}
	if outs[0] != outs[1] || outs[1] != outs[2] {
		t.Error("the batch size changed the output")
	}
}

func TestEngineFailsClosed(t *testing.T) {
	tok := mustFixture(t)
	cfg, _ := ParseConfig(fixtureConfig(0))
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		run  RunnerFunc
		want string
	}{
		{"runner error", func([]int64, []int64, int, int) ([]float32, error) { return nil, boom }, "boom"},
		{"short logits", func(ids []int64, _ []int64, b, T int) ([]float32, error) { return make([]float32, 5), nil }, "logits"},
	} {
		e, err := NewEngine(tok, cfg, Biases{}, 16, tc.run)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Detect("alice@example.com"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.name, err)
		}
		var buf bytes.Buffer
		w := redact.NewWriter(&buf, e)
		w.Write([]byte("secret alice@example.com\n"))
		w.Close()
		if strings.Contains(buf.String(), "alice") {
			t.Errorf("%s: the stream leaked %q", tc.name, buf.String())
		}
	}
	if _, err := NewEngine(tok, Config{}, Biases{}, 16, tableRunner(nil)); err == nil {
		t.Error("NewEngine accepted a config without labels")
	}
	if _, err := NewEngine(tok, cfg, Biases{}, 2, tableRunner(nil)); err == nil {
		t.Error("NewEngine accepted a limit of 2")
	}
}

func TestEngineStreams(t *testing.T) {
	e, _ := fixtureEngine(t, 64)
	var buf bytes.Buffer
	w := redact.NewWriter(&buf, e)
	for _, chunk := range []string{"line one\nmy email is ali", "ce@example.com ok\n", "call bob soon\n"} {
		if _, err := w.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := "line one\nmy email is [REDACTED:private_email] ok\ncall [REDACTED:private_person] soon\n"
	if buf.String() != want {
		t.Errorf("stream %q, want %q", buf.String(), want)
	}
}

func TestFindRuntimeLibrary(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(RuntimeEnv, "")
	if _, err := FindRuntimeLibrary("", dir); err == nil || !strings.Contains(err.Error(), RuntimeEnv) || !strings.Contains(err.Error(), "onnxruntime-node") {
		t.Errorf("nothing installed: %v", err)
	}
	rd, _ := RuntimeDir(dir)
	os.MkdirAll(rd, 0o755)
	lib := filepath.Join(rd, RuntimeLibraryNames()[0])
	os.WriteFile(lib, []byte("x"), 0o644)
	if got, err := FindRuntimeLibrary("", dir); err != nil || got != lib {
		t.Errorf("cache: %q %v, want %q", got, err, lib)
	}
	other := filepath.Join(dir, "libother.so")
	os.WriteFile(other, []byte("x"), 0o644)
	t.Setenv(RuntimeEnv, other)
	if got, err := FindRuntimeLibrary("", dir); err != nil || got != other {
		t.Errorf("env: %q %v", got, err)
	}
	if got, err := FindRuntimeLibrary(lib, dir); err != nil || got != lib {
		t.Errorf("explicit beats env: %q %v", got, err)
	}
	t.Setenv(RuntimeEnv, filepath.Join(dir, "missing.so"))
	if _, err := FindRuntimeLibrary("", dir); err == nil {
		t.Error("a missing named library was accepted")
	}
}
