package model

import (
	"context"
	"errors"
	"io"
	"path/filepath"

	"github.com/moat-sandbox/moat/internal/hfhub"
)

// SetupRequest is what [Setup] fetches. The zero value fetches the default
// variant at the pinned revision into the default cache from the hub named
// by HF_ENDPOINT, with the token of HF_TOKEN or $HF_HOME/token.
type SetupRequest struct {
	// Variant is the ONNX variant; "" means [DefaultVariant].
	Variant string
	// Revision is a 40-hex-digit commit; "" means [Revision].
	Revision string
	// CacheDir is the hub cache root; "" means $HF_HOME/hub, else
	// ~/.cache/huggingface/hub.
	CacheDir string
	// Force downloads every file again even if it is cached.
	Force bool
	// Progress, when not nil, receives a progress bar per download (a
	// terminal).
	Progress io.Writer
	// UserAgent is sent to the hub; "" means "moat".
	UserAgent string
}

// SetupFile is one file [Setup] made present.
type SetupFile struct {
	// Name is the file's path in the repository, such as onnx/model_q4.onnx.
	Name string
	// Path is where it is in the cache.
	Path string
	// Size is its size in bytes.
	Size int64
	// Downloaded is false when the cache already had it.
	Downloaded bool
	// Resumed is true when its download continued an interrupted one.
	Resumed bool
}

// SetupReport is what [Setup] did. The zero value reports nothing.
type SetupReport struct {
	// CacheRoot is the snapshot directory that holds config.json.
	CacheRoot string
	// Files lists every file of the variant, in download order.
	Files []SetupFile
}

// Setup downloads every asset of the requested variant and revision from
// the hub into the cache, checking each file's size and hash and writing it
// atomically (see package hfhub); a file already cached is kept unless
// Force. It is the only function of the package that touches the network.
func Setup(ctx context.Context, req SetupRequest) (SetupReport, error) {
	v, err := ParseVariant(req.Variant)
	if err != nil {
		return SetupReport{}, err
	}
	rev, err := ParseRevision(req.Revision)
	if err != nil {
		return SetupReport{}, err
	}
	root, err := hfhub.CacheDir(req.CacheDir)
	if err != nil {
		return SetupReport{}, err
	}
	if root, err = filepath.Abs(root); err != nil {
		return SetupReport{}, err
	}
	token, err := hfhub.Token()
	if err != nil {
		return SetupReport{}, err
	}
	c := &hfhub.Client{Endpoint: hfhub.Endpoint(), Token: token, Cache: hfhub.Cache{Root: root}, Force: req.Force, Progress: req.Progress, UserAgent: req.UserAgent}
	var rep SetupReport
	for _, f := range v.Files() {
		res, err := c.Fetch(ctx, Repository, rev, f)
		if err != nil {
			return rep, err
		}
		rep.Files = append(rep.Files, SetupFile{Name: f, Path: res.Path, Size: res.Size, Downloaded: res.Downloaded, Resumed: res.Resumed})
		if f == ConfigFile {
			rep.CacheRoot = filepath.Dir(res.Path)
		}
	}
	if rep.CacheRoot == "" {
		return rep, errors.New("setup: no config.json fetched")
	}
	return rep, nil
}

// HumanBytes formats n bytes as 1.5 MiB (binary units; below 1 KiB, "N B"),
// as setup's progress bar does.
func HumanBytes(n int64) string { return hfhub.HumanBytes(n) }
