package hfhub_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/hfhub"
	"github.com/moat-sandbox/moat/internal/hfhub/hubtest"
)

// The size and hash of a file come from the pinned revision's file list,
// not from the download's headers: a hub, storage or man in the middle that
// announces another size, sends more bytes than the revision lists, or
// sends other bytes with matching headers gets nothing into the cache, and
// no partial file is left behind. Controls: the same fault made consistent
// with the revision's list is accepted.
func TestFetchSizeAndContentFromTheRevision(t *testing.T) {
	evil := []byte(`{"id2label":{"0":"pwned"}}`)
	tests := []struct {
		name    string
		file    string
		fault   func(h *hubtest.Hub, f hubtest.File)
		max     int64
		want    string // "" means the fetch succeeds
		content []byte // what the cache holds on success; nil means the hub's file
		gets    bool   // whether a GET of the content may happen
	}{
		{"control: honest hub", "config.json", func(*hubtest.Hub, hubtest.File) {}, 0, "", nil, true},
		{"HEAD announces 1 TiB", "config.json", func(h *hubtest.Hub, f hubtest.File) {
			h.AnnounceSize("config.json", 1<<40)
		}, 0, "size mismatch", nil, false},
		{"LFS HEAD announces 1 TiB", "onnx/model.extra", func(h *hubtest.Hub, f hubtest.File) {
			h.AnnounceSize("onnx/model.extra", 1<<40)
		}, 0, "size mismatch", nil, false},
		{"revision lists a file over the ceiling", "onnx/model.onnx", func(*hubtest.Hub, hubtest.File) {}, 1000, "ceiling", nil, false},
		{"storage sends more bytes than listed", "onnx/model.extra", func(h *hubtest.Hub, f hubtest.File) {
			h.ServeBytes("onnx/model.extra", append(append([]byte{}, f.Content...), bytes.Repeat([]byte("x"), 1<<20)...))
		}, 0, "more than the revision's", nil, true},
		{"hub sends more bytes than listed", "config.json", func(h *hubtest.Hub, f hubtest.File) {
			h.ServeBytes("config.json", append(append([]byte{}, f.Content...), "trailing"...))
		}, 0, "more than the revision's", nil, true},
		{"same length, other bytes", "onnx/model.extra", func(h *hubtest.Hub, f hubtest.File) {
			h.ServeBytes("onnx/model.extra", bytes.Repeat([]byte("Z"), len(f.Content)))
		}, 0, "sha256 mismatch", nil, true},
		{"headers and bytes agree on other content", "config.json", func(h *hubtest.Hub, f hubtest.File) {
			h.Announce("config.json", hubtest.File{Content: evil})
			h.ServeBytes("config.json", evil)
		}, 0, "git blob sha1 mismatch", nil, false},
		{"LFS headers and bytes agree on other content", "onnx/model.extra", func(h *hubtest.Hub, f hubtest.File) {
			h.Announce("onnx/model.extra", hubtest.File{Content: evil, LFS: true})
			h.ServeBytes("onnx/model.extra", evil)
		}, 0, "sha256 mismatch", nil, false},
		{"control: the revision itself lists the other content", "config.json", func(h *hubtest.Hub, f hubtest.File) {
			h.Announce("config.json", hubtest.File{Content: evil})
			h.ServeBytes("config.json", evil)
			h.DescribeAs("config.json", hubtest.File{Content: evil})
		}, 0, "", evil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := hubtest.New(repo, rev, testFiles())
			defer h.Close()
			tc.fault(h, h.Files[tc.file])
			c := newClient(t, h)
			c.MaxSize = tc.max
			res, err := c.Fetch(context.Background(), repo, rev, tc.file)
			gets := 0
			for _, r := range h.Requests() {
				if r.Method == "GET" {
					gets++
				}
			}
			if gets > 0 && !tc.gets {
				t.Errorf("%d GETs of a file that should have been refused before downloading", gets)
			}
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				want := tc.content
				if want == nil {
					want = h.Files[tc.file].Content
				}
				if got, _ := os.ReadFile(res.Path); !bytes.Equal(got, want) {
					t.Errorf("cache holds %q", got)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
			if _, err := os.Lstat(c.Cache.SnapshotPath(repo, rev, tc.file)); !os.IsNotExist(err) {
				t.Errorf("snapshot entry after a refusal: %v", err)
			}
			blobs, _ := os.ReadDir(filepath.Join(c.Cache.RepoDir(repo), "blobs"))
			for _, b := range blobs {
				fi, _ := b.Info()
				t.Errorf("left in blobs/: %s (%d bytes)", b.Name(), fi.Size())
			}
		})
	}
}

// The ceiling's default is documented and positive.
func TestFetchSizeCeilingDefault(t *testing.T) {
	if hfhub.DefaultMaxSize <= 0 {
		t.Fatal("no ceiling")
	}
}
