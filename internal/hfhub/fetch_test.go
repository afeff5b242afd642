package hfhub_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat/internal/hfhub"
	"github.com/moat-sandbox/moat/internal/hfhub/hubtest"
)

const (
	repo = "openai/privacy-filter"
	rev  = "7ffa9a043d54d1be65afb281eddf0ffbe629385b"
)

func testFiles() map[string]hubtest.File {
	big := make([]byte, 300_000)
	rand.New(rand.NewSource(1)).Read(big)
	return map[string]hubtest.File{
		"config.json":      {Content: []byte(`{"id2label":{}}`)},
		"onnx/model.onnx":  {Content: big, LFS: true},
		"onnx/model.extra": {Content: []byte("sidecar bytes"), LFS: true},
	}
}

func newClient(t *testing.T, h *hubtest.Hub) *hfhub.Client {
	t.Helper()
	return &hfhub.Client{Endpoint: h.URL, Cache: hfhub.Cache{Root: t.TempDir()}, StallTimeout: 5 * time.Second}
}

func TestFetchDownloadsChecksAndLinks(t *testing.T) {
	h := hubtest.New(repo, rev, testFiles())
	defer h.Close()
	c := newClient(t, h)
	for _, tc := range []struct{ name, file string }{
		{"small git file, sha1 etag", "config.json"},
		{"LFS file behind a redirect, sha256 etag", "onnx/model.onnx"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.Fetch(context.Background(), repo, rev, tc.file)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Downloaded || res.Resumed {
				t.Errorf("Downloaded=%v Resumed=%v, want true false", res.Downloaded, res.Resumed)
			}
			got, err := os.ReadFile(res.Path)
			if err != nil || !bytes.Equal(got, h.Files[tc.file].Content) {
				t.Fatalf("cached content differs (err %v)", err)
			}
			if want := c.Cache.SnapshotPath(repo, rev, tc.file); res.Path != want {
				t.Errorf("Path %s, want %s", res.Path, want)
			}
			// A link to the blob, or a copy where links cannot be made.
			if fi, err := os.Lstat(res.Path); err != nil || (fi.Mode()&os.ModeSymlink == 0 && (runtime.GOOS != "windows" || !fi.Mode().IsRegular())) {
				t.Errorf("snapshot entry is not a link to a blob: %v %v", fi, err)
			}
			blob := filepath.Join(c.Cache.RepoDir(repo), "blobs", hubtest.Hash(h.Files[tc.file]))
			if _, err := os.Stat(blob); err != nil {
				t.Errorf("blob named by its hash: %v", err)
			}
			// A second Fetch answers from the cache without the network.
			before := len(h.Requests())
			res2, err := c.Fetch(context.Background(), repo, rev, tc.file)
			if err != nil || res2.Downloaded || len(h.Requests()) != before {
				t.Errorf("cached Fetch: err %v, Downloaded %v, %d new requests", err, res2.Downloaded, len(h.Requests())-before)
			}
		})
	}
}

func TestFetchResumesAnInterruptedDownload(t *testing.T) {
	h := hubtest.New(repo, rev, testFiles())
	defer h.Close()
	c := newClient(t, h)
	const file = "onnx/model.onnx"
	h.CutAfter(file, 100_000)
	_, err := c.Fetch(context.Background(), repo, rev, file)
	if err == nil || !strings.Contains(err.Error(), "run again to resume") {
		t.Fatalf("cut download: err %v, want one saying to run again", err)
	}
	// Nothing that looks complete: no snapshot entry, no blob, only the
	// partial file under its temporary name.
	if _, err := os.Lstat(c.Cache.SnapshotPath(repo, rev, file)); !os.IsNotExist(err) {
		t.Errorf("snapshot entry after a cut download: %v", err)
	}
	blob := filepath.Join(c.Cache.RepoDir(repo), "blobs", hubtest.Hash(h.Files[file]))
	if _, err := os.Stat(blob); !os.IsNotExist(err) {
		t.Errorf("blob after a cut download: %v", err)
	}
	fi, err := os.Stat(blob + ".incomplete")
	if err != nil || fi.Size() != 100_000 {
		t.Fatalf("partial file: %v %v, want 100000 bytes", fi, err)
	}
	if _, err := c.Cache.Lookup(repo, rev, file); err == nil {
		t.Error("Lookup found a file that was never completed")
	}
	res, err := c.Fetch(context.Background(), repo, rev, file)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Resumed {
		t.Error("second Fetch did not resume")
	}
	var ranges []string
	for _, r := range h.Requests() {
		if r.Range != "" {
			ranges = append(ranges, r.Range)
		}
	}
	if len(ranges) != 1 || ranges[0] != "bytes=100000-" {
		t.Errorf("Range requests %q, want one bytes=100000-", ranges)
	}
	got, _ := os.ReadFile(res.Path)
	if !bytes.Equal(got, h.Files[file].Content) {
		t.Error("resumed file differs from the original")
	}
	if _, err := os.Stat(blob + ".incomplete"); !os.IsNotExist(err) {
		t.Errorf("partial file left behind: %v", err)
	}
}

func TestFetchRestartsWhenTheHubIgnoresRange(t *testing.T) {
	h := hubtest.New(repo, rev, testFiles())
	defer h.Close()
	c := newClient(t, h)
	const file = "onnx/model.onnx"
	h.CutAfter(file, 5000)
	if _, err := c.Fetch(context.Background(), repo, rev, file); err == nil {
		t.Fatal("cut download succeeded")
	}
	h.IgnoreRange(true)
	res, err := c.Fetch(context.Background(), repo, rev, file)
	if err != nil {
		t.Fatal(err)
	}
	if res.Resumed {
		t.Error("Resumed although the hub sent the whole file")
	}
	got, _ := os.ReadFile(res.Path)
	if !bytes.Equal(got, h.Files[file].Content) {
		t.Error("file differs after a restarted download")
	}
}

func TestFetchRefusesABadHash(t *testing.T) {
	for _, file := range []string{"config.json", "onnx/model.onnx"} {
		t.Run(file, func(t *testing.T) {
			h := hubtest.New(repo, rev, testFiles())
			defer h.Close()
			c := newClient(t, h)
			h.AnnounceBadHash(file, true)
			_, err := c.Fetch(context.Background(), repo, rev, file)
			if err == nil || !strings.Contains(err.Error(), "mismatch") {
				t.Fatalf("err %v, want a hash mismatch", err)
			}
			if _, err := os.Lstat(c.Cache.SnapshotPath(repo, rev, file)); !os.IsNotExist(err) {
				t.Errorf("snapshot entry for a file that failed its hash: %v", err)
			}
			blobs, _ := os.ReadDir(filepath.Join(c.Cache.RepoDir(repo), "blobs"))
			if len(blobs) != 0 {
				t.Errorf("blobs left after a bad hash: %v", blobs)
			}
			// The hub fixed: the next setup succeeds.
			h.AnnounceBadHash(file, false)
			if _, err := c.Fetch(context.Background(), repo, rev, file); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestFetchDiscardsACorruptPartialFile(t *testing.T) {
	// An interrupted write can leave a partial file of the right size but
	// wrong bytes (a crash before the data reached the disk): the hash check
	// throws it away and the next run starts over.
	h := hubtest.New(repo, rev, testFiles())
	defer h.Close()
	c := newClient(t, h)
	const file = "onnx/model.onnx"
	f := h.Files[file]
	blobs := filepath.Join(c.Cache.RepoDir(repo), "blobs")
	os.MkdirAll(blobs, 0o755)
	partial := filepath.Join(blobs, hubtest.Hash(f)+".incomplete")
	if err := os.WriteFile(partial, make([]byte, len(f.Content)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Fetch(context.Background(), repo, rev, file); err == nil || !strings.Contains(err.Error(), "sha256 mismatch") {
		t.Fatalf("err %v, want sha256 mismatch", err)
	}
	if _, err := os.Stat(partial); !os.IsNotExist(err) {
		t.Errorf("corrupt partial file kept: %v", err)
	}
	if _, err := c.Fetch(context.Background(), repo, rev, file); err != nil {
		t.Fatal(err)
	}
	// A partial file longer than the announced size is dropped, not trusted.
	c2 := newClient(t, h)
	blobs2 := filepath.Join(c2.Cache.RepoDir(repo), "blobs")
	os.MkdirAll(blobs2, 0o755)
	os.WriteFile(filepath.Join(blobs2, hubtest.Hash(f)+".incomplete"), make([]byte, len(f.Content)+10), 0o644)
	if _, err := c2.Fetch(context.Background(), repo, rev, file); err != nil {
		t.Fatal(err)
	}
}

func TestFetchSendsTheToken(t *testing.T) {
	h := hubtest.New(repo, rev, testFiles())
	defer h.Close()
	h.Token = "hf_secret"
	c := newClient(t, h)
	_, err := c.Fetch(context.Background(), repo, rev, "config.json")
	if err == nil || !strings.Contains(err.Error(), "HF_TOKEN") {
		t.Fatalf("without a token: err %v, want one naming HF_TOKEN", err)
	}
	c.Token = "hf_secret"
	for _, f := range []string{"config.json", "onnx/model.onnx"} {
		if _, err := c.Fetch(context.Background(), repo, rev, f); err != nil {
			t.Fatal(err)
		}
	}
	// The hub gets the token; its LFS storage, another origin, never does.
	storage := 0
	for _, r := range h.Requests()[1:] {
		want := "Bearer hf_secret"
		if r.Storage {
			want = ""
			storage++
		}
		if r.Authorization != want {
			t.Errorf("%s %s (storage %v): Authorization %q, want %q", r.Method, r.Path, r.Storage, r.Authorization, want)
		}
	}
	if storage == 0 {
		t.Error("no request reached the LFS storage")
	}
}

func TestFetchForceDownloadsAgain(t *testing.T) {
	h := hubtest.New(repo, rev, testFiles())
	defer h.Close()
	c := newClient(t, h)
	if _, err := c.Fetch(context.Background(), repo, rev, "onnx/model.extra"); err != nil {
		t.Fatal(err)
	}
	c.Force = true
	before := len(h.Requests())
	res, err := c.Fetch(context.Background(), repo, rev, "onnx/model.extra")
	if err != nil || !res.Downloaded || len(h.Requests()) <= before {
		t.Fatalf("forced Fetch: err %v, Downloaded %v", err, res.Downloaded)
	}
}

// withTree answers the revision's file list (paths-info) for file (""
// means the one asked for) as an
// LFS file with hash sha256 and size (def when size is 0), and passes every
// other request to next.
func withTree(file, sha256 string, def, size int, next http.HandlerFunc) http.HandlerFunc {
	if size == 0 {
		size = def
	}
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.Contains(r.URL.Path, "/paths-info/") {
			name := file
			if name == "" {
				name = r.PostFormValue("paths")
			}
			fmt.Fprintf(w, `[{"type":"file","path":%q,"oid":"%s","size":134,"lfs":{"oid":%q,"size":%d,"pointerSize":134}}]`, name, strings.Repeat("a", 40), sha256, size)
			return
		}
		next(w, r)
	}
}

func TestFetchErrors(t *testing.T) {
	body := []byte("hello")
	sum := sha256.Sum256(body)
	sha := hex.EncodeToString(sum[:])
	tests := []struct {
		name    string
		handler http.HandlerFunc
		file    string
		want    string
		size    int // the size the revision's file list gives, when not 5
	}{
		{"not found", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }, "config.json", "not found on the hub", 0},
		{"server error", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }, "config.json", "500", 0},
		{"no checkable hash", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("ETag", `"abc"`)
			w.Header().Set("Content-Length", "5")
		}, "config.json", "no checkable hash", 0},
		{"another commit", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("ETag", `"`+sha+`"`)
			w.Header().Set("X-Repo-Commit", strings.Repeat("1", 40))
		}, "config.json", "not the requested", 0},
		{"more bytes than announced", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("ETag", `"`+sha+`"`)
			if r.Method == http.MethodHead {
				w.Header().Set("Content-Length", "3")
				return
			}
			w.Write(body)
		}, "config.json", "more than the revision's 3 bytes", 3},
		{"path escape", func(w http.ResponseWriter, r *http.Request) {}, "../etc/passwd", "clean relative path", 0},
		{"absolute path", func(w http.ResponseWriter, r *http.Request) {}, "/etc/passwd", "clean relative path", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(withTree(tc.file, sha, 5, tc.size, tc.handler))
			defer srv.Close()
			c := &hfhub.Client{Endpoint: srv.URL, Cache: hfhub.Cache{Root: t.TempDir()}}
			_, err := c.Fetch(context.Background(), repo, rev, tc.file)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want it to contain %q", err, tc.want)
			}
			if strings.HasPrefix(err.Error(), "moat: ") {
				t.Errorf("error %q starts with moat:, which only the command adds", err)
			}
		})
	}
}

func TestFetchStallTimeout(t *testing.T) {
	release := make(chan struct{})
	body := []byte("hello")
	sum := sha256.Sum256(body)
	srv := httptest.NewServer(withTree("config.json", hex.EncodeToString(sum[:]), 5, 0, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:])+`"`)
		w.Header().Set("Content-Length", "5")
		if r.Method == http.MethodHead {
			return
		}
		w.WriteHeader(200)
		w.Write(body[:2])
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release) // before Close, which waits for the handler
	c := &hfhub.Client{Endpoint: srv.URL, Cache: hfhub.Cache{Root: t.TempDir()}, StallTimeout: 300 * time.Millisecond}
	start := time.Now()
	_, err := c.Fetch(context.Background(), repo, rev, "config.json")
	if err == nil || !strings.Contains(err.Error(), "stalled") {
		t.Fatalf("err %v, want a stall", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("stall noticed after %v", el)
	}
}

func TestEnvironment(t *testing.T) {
	home := t.TempDir()
	tests := []struct {
		name                  string
		endpoint, hfHome, tok string
		tokenFile             string
		wantEndpoint          string
		wantCache, wantToken  string
	}{
		{name: "defaults", hfHome: home, wantEndpoint: hfhub.DefaultEndpoint, wantCache: filepath.Join(home, "hub")},
		{name: "HF_ENDPOINT trailing slash", endpoint: "http://127.0.0.1:9/", hfHome: home, wantEndpoint: "http://127.0.0.1:9", wantCache: filepath.Join(home, "hub")},
		{name: "token file", hfHome: home, tokenFile: "hf_file\n", wantEndpoint: hfhub.DefaultEndpoint, wantCache: filepath.Join(home, "hub"), wantToken: "hf_file"},
		{name: "HF_TOKEN beats the file", hfHome: home, tok: "hf_env", tokenFile: "hf_file", wantEndpoint: hfhub.DefaultEndpoint, wantCache: filepath.Join(home, "hub"), wantToken: "hf_env"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("HF_ENDPOINT", tc.endpoint)
			t.Setenv("HF_HOME", tc.hfHome)
			t.Setenv("HF_TOKEN", tc.tok)
			os.Remove(filepath.Join(home, "token"))
			if tc.tokenFile != "" {
				os.WriteFile(filepath.Join(home, "token"), []byte(tc.tokenFile), 0o600)
			}
			if got := hfhub.Endpoint(); got != tc.wantEndpoint {
				t.Errorf("Endpoint %q, want %q", got, tc.wantEndpoint)
			}
			if got, _ := hfhub.CacheDir(""); got != tc.wantCache {
				t.Errorf("CacheDir %q, want %q", got, tc.wantCache)
			}
			if got, _ := hfhub.CacheDir("/x"); got != "/x" {
				t.Errorf("CacheDir(/x) %q", got)
			}
			if got, err := hfhub.Token(); err != nil || got != tc.wantToken {
				t.Errorf("Token %q %v, want %q", got, err, tc.wantToken)
			}
		})
	}
}

func TestCheckFileName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"config.json", true}, {"onnx/model_q4.onnx", true}, {"onnx/model.onnx_data_1", true},
		{"", false}, {"/abs", false}, {"../x", false}, {"a/../../x", false}, {"a//b", false},
		{"a/./b", false}, {".", false}, {"..", false}, {`a\b`, false}, {"a/", false},
	} {
		if err := hfhub.CheckFileName(tc.name); (err == nil) != tc.ok {
			t.Errorf("CheckFileName(%q) = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

func FuzzCheckFileName(f *testing.F) {
	for _, s := range []string{"config.json", "onnx/a.onnx", "../x", "a/../b", "/x", "a\\b"} {
		f.Add(s)
	}
	root := "/cache/snap"
	f.Fuzz(func(t *testing.T, name string) {
		if hfhub.CheckFileName(name) != nil {
			return
		}
		p := filepath.Join(root, filepath.FromSlash(name))
		if !strings.HasPrefix(p, root+string(filepath.Separator)) {
			t.Fatalf("accepted %q escapes to %q", name, p)
		}
	})
}

func TestFetchDrawsProgress(t *testing.T) {
	h := hubtest.New(repo, rev, testFiles())
	defer h.Close()
	var bar bytes.Buffer
	c := newClient(t, h)
	c.Progress = &bar
	if _, err := c.Fetch(context.Background(), repo, rev, "onnx/model.onnx"); err != nil {
		t.Fatal(err)
	}
	out := bar.String()
	for _, want := range []string{"\ronnx/model.onnx [", "100%", "293.0 KiB/293.0 KiB", "\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("progress %q lacks %q", out, want)
		}
	}
}
