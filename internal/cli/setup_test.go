package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/hfhub/hubtest"
	"github.com/moat-sandbox/moat/redact/model"
)

// PF1, PF2: the help lists the flags and the q4 default.
func TestSetupHelp(t *testing.T) {
	code, out, errOut := executeCaptured(t, "setup", "--help")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"--force", "--cache-dir", "--variant", "--revision", "q4", model.Revision, "HF_ENDPOINT", "HF_TOKEN"} {
		if !strings.Contains(out, want) {
			t.Errorf("setup --help lacks %q", want)
		}
	}
}

// fakeHub serves every file of variant v with placeholder contents; the
// ONNX files are LFS files, as on the real hub.
func fakeHub(t *testing.T, v model.Variant) *hubtest.Hub {
	t.Helper()
	files := map[string]hubtest.File{}
	for _, f := range v.Files() {
		files[f] = hubtest.File{Content: []byte("contents of " + f + strings.Repeat(".", 5000)), LFS: strings.HasPrefix(f, "onnx/")}
	}
	h := hubtest.New(model.Repository, model.Revision, files)
	t.Cleanup(h.Close)
	t.Setenv("HF_ENDPOINT", h.URL)
	home := t.TempDir()
	t.Setenv("HF_HOME", home)
	t.Setenv("HF_TOKEN", "")
	return h
}

// PF3, PF4 and the setup itself, against a fake hub named by HF_ENDPOINT.
func TestSetupDownloads(t *testing.T) {
	tests := []struct {
		name    string
		variant model.Variant
		args    []string
	}{
		{"default variant is q4", model.VariantQ4, nil},
		{"fp16 with two sidecars", model.VariantFP16, []string{"--variant", "fp16"}},
		{"force", model.VariantQ4, []string{"--force"}},
		{"explicit revision", model.VariantQ4, []string{"--revision", model.Revision}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := fakeHub(t, tc.variant)
			cache := t.TempDir()
			args := append([]string{"setup", "--cache-dir", cache}, tc.args...)
			code, out, errOut := executeCaptured(t, args...)
			if code != 0 {
				t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
			}
			snap, _ := model.SnapshotDir(cache, "")
			if !strings.HasPrefix(out, "Privacy filter setup complete.\nCache root: "+snap+"\n") {
				t.Errorf("stdout %q", out)
			}
			for _, f := range tc.variant.Files() {
				p := filepath.Join(snap, filepath.FromSlash(f))
				if !strings.Contains(out, p) {
					t.Errorf("stdout does not list %s", p)
				}
				b, err := os.ReadFile(p)
				if err != nil || string(b) != string(h.Files[f].Content) {
					t.Errorf("%s: %v", f, err)
				}
			}
			// Again: everything is cached, nothing is fetched, unless --force.
			before := len(h.Requests())
			code, out, _ = executeCaptured(t, args...)
			again := len(h.Requests()) - before
			forced := len(tc.args) > 0 && tc.args[0] == "--force"
			if code != 0 || (again == 0) == forced || strings.Contains(out, "downloaded") == !forced {
				t.Errorf("second run: exit %d, %d requests, stdout %q", code, again, out)
			}
		})
	}
}

func TestSetupFailures(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		setup    func(*hubtest.Hub)
		wantCode int
		want     string
	}{
		{"unknown variant", []string{"--variant", "q8"}, nil, 2, `moat: --variant "q8": want one of fp16, full, q4, q4f16, quantized`},
		{"branch revision", []string{"--revision", "main"}, nil, 2, `moat: --revision "main": want a 40-hex-digit commit id`},
		{"extra argument", []string{"now"}, nil, 2, `moat: setup: unexpected argument "now"`},
		{"unknown flag", []string{"--bogus"}, nil, 2, "moat: unknown flag: --bogus"},
		{"bad hash", nil, func(h *hubtest.Hub) { h.AnnounceBadHash("onnx/model_q4.onnx_data", true) }, 1, "moat: setup: onnx/model_q4.onnx_data: sha256 mismatch"},
		{"cut download", nil, func(h *hubtest.Hub) { h.CutAfter("onnx/model_q4.onnx", 100) }, 1, "run again to resume"},
		{"token required", nil, func(h *hubtest.Hub) { h.Token = "hf_needed" }, 1, "set HF_TOKEN"},
		{"revision not on the hub", []string{"--revision", strings.Repeat("a", 40)}, nil, 1, "not found on the hub"},
		// Offline: nothing answers at HF_ENDPOINT; the line says so and names it.
		{"hub unreachable", nil, func(h *hubtest.Hub) { h.Close() }, 1, "cannot reach the hub at http://127.0.0.1:"},
		{"hub unreachable names HF_ENDPOINT", nil, func(h *hubtest.Hub) { h.Close() }, 1, "set HF_ENDPOINT to a hub or mirror this machine can reach"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := fakeHub(t, model.VariantQ4)
			if tc.setup != nil {
				tc.setup(h)
			}
			cache := t.TempDir()
			code, out, errOut := executeCaptured(t, append([]string{"setup", "--cache-dir", cache}, tc.args...)...)
			if code != tc.wantCode || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, errOut, tc.wantCode, tc.want)
			}
			if strings.Contains(out, "complete") {
				t.Errorf("a failed setup printed %q", out)
			}
			// Whatever failed, nothing in the snapshot looks complete
			// unless it is.
			filepath.Walk(cache, func(p string, fi os.FileInfo, err error) error {
				if err == nil && strings.Contains(p, "snapshots") && !fi.IsDir() {
					snap, _ := model.SnapshotDir(cache, "")
					rel, _ := filepath.Rel(snap, p)
					if b, err := os.ReadFile(p); err != nil || string(b) != string(h.Files[filepath.ToSlash(rel)].Content) {
						t.Errorf("snapshot file %s is not the hub's file", rel)
					}
				}
				return nil
			})
		})
	}
}

// The token file under HF_HOME is sent as a bearer token, and a setup cut
// short resumes on the next run.
func TestSetupTokenFileAndResume(t *testing.T) {
	h := fakeHub(t, model.VariantQ4)
	h.Token = "hf_from_file"
	os.WriteFile(filepath.Join(os.Getenv("HF_HOME"), "token"), []byte("hf_from_file\n"), 0o600)
	h.CutAfter("onnx/model_q4.onnx_data", 1000)
	cache := t.TempDir()
	if code, _, errOut := executeCaptured(t, "setup", "--cache-dir", cache); code != 1 || !strings.Contains(errOut, "resume") {
		t.Fatalf("cut setup: exit %d, %q", code, errOut)
	}
	code, out, errOut := executeCaptured(t, "setup", "--cache-dir", cache)
	if code != 0 || !strings.Contains(out, "model_q4.onnx_data (") || !strings.Contains(out, "downloaded, resumed") {
		t.Fatalf("resumed setup: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, r := range h.Requests() {
		if r.Storage != (r.Authorization == "") || !r.Storage && r.Authorization != "Bearer hf_from_file" {
			t.Fatalf("%s %s (storage %v): Authorization %q; want the token at the hub only", r.Method, r.Path, r.Storage, r.Authorization)
		}
	}
}
