//go:build onnx && cgo

package model

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/hfhub"
	"github.com/moat-sandbox/moat/internal/hfhub/hubtest"
	"github.com/moat-sandbox/moat/redact"
)

// needModelTools returns the Python that has the onnx module. Without the
// ONNX Runtime library or python3-onnx the model tests skip with the reason,
// unless MOAT_REQUIRE_ONNX=1 (test.sh sets it once it installed both), when
// they fail.
func needModelTools(t *testing.T) string {
	t.Helper()
	missing := func(reason string) {
		if os.Getenv("MOAT_REQUIRE_ONNX") == "1" {
			t.Fatal("MOAT_REQUIRE_ONNX=1 but " + reason)
		}
		t.Skip("SKIPPED, the model engine is NOT tested: " + reason)
	}
	if lib := os.Getenv(RuntimeEnv); lib == "" {
		missing(RuntimeEnv + " is unset: ./test.sh installs libonnxruntime.so.1 from npm's onnxruntime-node and sets it")
	} else if _, err := os.Stat(lib); err != nil {
		missing(RuntimeEnv + ": " + err.Error())
	}
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		if py, err = exec.LookPath("python3"); err != nil {
			missing("no python3 to generate the tiny ONNX model")
		}
	}
	if out, err := exec.Command(py, "-c", "import onnx").CombinedOutput(); err != nil {
		missing("python3 cannot import onnx (apt-get install python3-onnx): " + strings.TrimSpace(string(out)))
	}
	return py
}

// tinyHubFiles builds the fixture assets and a tiny ONNX model for variant
// v (float16 logits for the f16 variants) and returns them as hub files.
func tinyHubFiles(t *testing.T, py string, v Variant, limit int) map[string]hubtest.File {
	t.Helper()
	src := t.TempDir()
	tok, _ := writeFixtureAssets(t, src, limit)
	table, _ := json.Marshal(labelTable(t, tok))
	tablePath := filepath.Join(src, "table.json")
	os.WriteFile(tablePath, table, 0o644)
	onnxPath := filepath.Join(src, filepath.FromSlash(v.ONNXFile()))
	os.MkdirAll(filepath.Dir(onnxPath), 0o755)
	args := []string{filepath.Join("testdata", "gen_tiny_model.py"), onnxPath, tablePath}
	if strings.Contains(string(v), "16") {
		args = append(args, "float16")
	}
	if out, err := exec.Command(py, args...).CombinedOutput(); err != nil {
		t.Fatalf("generating the tiny model: %v\n%s", err, out)
	}
	files := map[string]hubtest.File{}
	for _, f := range v.Files() {
		p := filepath.Join(src, filepath.FromSlash(f))
		b, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) && strings.Contains(f, "_data_") {
			b, err = []byte("unused extra sidecar"), nil // the tiny model keeps one
		}
		if err != nil {
			t.Fatal(err)
		}
		files[f] = hubtest.File{Content: b, LFS: strings.HasPrefix(f, "onnx/")}
	}
	return files
}

// TestONNXEndToEnd downloads a tiny model through the setup code from a
// fake hub, opens the registered "model" engine from the cache and runs
// tokenize, infer, decode and redact, comparing with the Go fixture model.
func TestONNXEndToEnd(t *testing.T) {
	py := needModelTools(t)
	for _, v := range []Variant{VariantQ4, VariantFP16} {
		t.Run(string(v), func(t *testing.T) {
			const limit = 32
			h := hubtest.New(Repository, Revision, tinyHubFiles(t, py, v, limit))
			defer h.Close()
			cache := t.TempDir()
			c := &hfhub.Client{Endpoint: h.URL, Cache: hfhub.Cache{Root: cache}}
			for _, f := range v.Files() {
				if _, err := c.Fetch(context.Background(), Repository, Revision, f); err != nil {
					t.Fatal(err)
				}
			}
			d, err := redact.Open(redact.EngineModel, redact.Options{CacheDir: cache, Variant: string(v)})
			if err != nil {
				t.Fatal(err)
			}
			e := d.(interface{ Unwrap() redact.Detector }).Unwrap().(*Engine)
			defer e.Close()
			ref, _ := fixtureEngine(t, limit)
			for _, text := range []string{
				"my email is alice@example.com ok",
				longText(40), // many windows of 32 tokens, batched
				"call bob soon",
				"nothing to see",
			} {
				got, err := e.Redact(text)
				if err != nil {
					t.Fatal(err)
				}
				want, _ := ref.Redact(text)
				if got != want {
					t.Errorf("ONNX engine: %q\nGo fixture model: %q", got, want)
				}
				if strings.Contains(got, "alice") || strings.Contains(got, "bob") {
					t.Errorf("leaked: %q", got)
				}
			}
			got, _ := e.Redact(longText(40))
			if !strings.HasSuffix(got, "[REDACTED:private_email], call [REDACTED:private_person] soon. TAIL-MARKER-END") {
				t.Errorf("tail: %q", got[max(0, len(got)-100):])
			}
		})
	}
}

func TestONNXOpenNeedsSetup(t *testing.T) {
	needModelTools(t)
	cache := t.TempDir()
	_, err := redact.Open(redact.EngineModel, redact.Options{CacheDir: cache})
	if !errors.Is(err, ErrNotReady) || !strings.Contains(err.Error(), "moat setup --cache-dir "+cache) {
		t.Fatalf("Open on an empty cache: %v", err)
	}
	if _, err := redact.Open(redact.EngineModel, redact.Options{CacheDir: cache, ExecutionProvider: "webgpu"}); err == nil || !strings.Contains(err.Error(), "cpu only") {
		t.Fatalf("webgpu: %v", err)
	}
}

func TestHalfToFloat(t *testing.T) {
	for _, tc := range []struct {
		h    uint16
		want float32
	}{{0x0000, 0}, {0x3c00, 1}, {0xc000, -2}, {0x4900, 10}, {0x3800, 0.5}, {0x0001, 5.9604645e-08}, {0x7bff, 65504}} {
		if got := halfToFloat(tc.h); got != tc.want {
			t.Errorf("halfToFloat(%#04x) = %v, want %v", tc.h, got, tc.want)
		}
	}
}

// TestCLISetupThenRedact builds moat with the model engine and runs what a
// user runs: moat setup against a fake hub named by HF_ENDPOINT, then moat
// redact --engine model from the cache, for text, a file and stdin, with a
// token limit of 32 so the tail lies windows away (PF8-PF10).
func TestCLISetupThenRedact(t *testing.T) {
	py := needModelTools(t)
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("no go command to build moat: ", err)
	}
	bin := filepath.Join(t.TempDir(), "moat")
	build := exec.Command(goTool, "build", "-tags", redact.ModelBuildTag, "-o", bin, "github.com/moat-sandbox/moat/cmd/moat")
	build.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags onnx: %v\n%s", err, out)
	}
	h := hubtest.New(Repository, Revision, tinyHubFiles(t, py, VariantQ4, 32))
	defer h.Close()
	h.Token = "hf_cli_token"
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "token"), []byte("hf_cli_token\n"), 0o600)
	env := append(os.Environ(), "HF_ENDPOINT="+h.URL, "HF_HOME="+home, "HF_TOKEN=")
	moat := func(stdin string, args ...string) (int, string, string) {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		cmd.Stdin = strings.NewReader(stdin)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, out.String(), errb.String()
	}
	// Before setup the engine says what to run (HF_HOME's cache).
	if code, _, errOut := moat("", "redact", "--engine", "model", "hello"); code != 1 || !strings.Contains(errOut, "moat setup") {
		t.Fatalf("redact before setup: exit %d, %q", code, errOut)
	}
	code, out, errOut := moat("", "setup")
	if code != 0 || !strings.HasPrefix(out, "Privacy filter setup complete.") || !strings.Contains(out, "model_q4.onnx_data") {
		t.Fatalf("setup: exit %d\n%s\n%s", code, out, errOut)
	}
	long := longText(40)
	file := filepath.Join(t.TempDir(), "long.txt")
	os.WriteFile(file, []byte(long), 0o644)
	wantTail := "my email is [REDACTED:private_email], call [REDACTED:private_person] soon. TAIL-MARKER-END\n"
	for _, tc := range []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"text", "", []string{"my email is alice@example.com ok"}, "my email is [REDACTED:private_email] ok\n"},
		{"stdin (PF8, PF9)", long, nil, wantTail},
		{"file (PF10)", "", []string{file}, wantTail},
	} {
		code, out, errOut := moat(tc.stdin, append([]string{"redact", "--engine", "model"}, tc.args...)...)
		if code != 0 || !strings.HasSuffix(out, tc.want) || strings.Contains(out, "alice") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", tc.name, code, out[max(0, len(out)-120):], errOut)
		}
	}
}
