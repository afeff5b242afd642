package model

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/moat-sandbox/moat/internal/hfhub"
	"github.com/moat-sandbox/moat/redact"
)

// ErrNotReady is matched by [errors.Is] when the model's assets are not in
// the cache: run moat setup first. The engine never downloads.
var ErrNotReady = errors.New("privacy filter is not set up")

// Paths are the cached files of one variant at one revision. The zero value
// names nothing.
type Paths struct {
	// Dir is the snapshot directory that holds the files.
	Dir string
	// Config, Tokenizer, TokenizerConfig and Calibration are the JSON
	// assets; ONNX is the variant's model and Sidecars its external data.
	Config, Tokenizer, TokenizerConfig, Calibration, ONNX string
	Sidecars                                              []string
	// Revision and Variant are what was located.
	Revision string
	Variant  Variant
	// CacheRoot is the hub cache root searched.
	CacheRoot string
}

// Locate finds every file of the variant and revision named by opts in the
// cache (opts.CacheDir, else $HF_HOME/hub, else ~/.cache/huggingface/hub),
// without touching the network. A missing file is an [ErrNotReady] error
// that names it and the moat setup command that fetches it.
func Locate(opts redact.Options) (Paths, error) {
	v, err := ParseVariant(opts.Variant)
	if err != nil {
		return Paths{}, err
	}
	rev, err := ParseRevision(opts.Revision)
	if err != nil {
		return Paths{}, err
	}
	root, err := hfhub.CacheDir(opts.CacheDir)
	if err != nil {
		return Paths{}, err
	}
	c := hfhub.Cache{Root: root}
	p := Paths{Dir: c.SnapshotDir(Repository, rev), Revision: rev, Variant: v, CacheRoot: root}
	for _, f := range v.Files() {
		path, err := c.Lookup(Repository, rev, f)
		if err != nil {
			return Paths{}, fmt.Errorf("%w: %s of %s at revision %s is missing from the cache %s (%v); run: %s",
				ErrNotReady, f, Repository, rev, root, trimErr(err), SetupCommand(opts))
		}
		switch f {
		case ConfigFile:
			p.Config = path
		case TokenizerFile:
			p.Tokenizer = path
		case TokenizerConfigFile:
			p.TokenizerConfig = path
		case CalibrationFile:
			p.Calibration = path
		case v.ONNXFile():
			p.ONNX = path
		default:
			p.Sidecars = append(p.Sidecars, path)
		}
	}
	return p, nil
}

func trimErr(err error) string {
	if errors.Is(err, hfhub.ErrNotCached) {
		return "not found"
	}
	return err.Error()
}

// SetupCommand returns the moat setup command line that fetches what opts
// asks for.
func SetupCommand(opts redact.Options) string {
	cmd := "moat setup"
	if opts.Variant != "" && Variant(opts.Variant) != DefaultVariant {
		cmd += " --variant " + opts.Variant
	}
	if opts.Revision != "" && opts.Revision != Revision {
		cmd += " --revision " + opts.Revision
	}
	if opts.CacheDir != "" {
		cmd += " --cache-dir " + opts.CacheDir
	}
	return cmd
}

// RuntimeEnv is the environment variable that names the ONNX Runtime
// shared library.
const RuntimeEnv = "MOAT_ONNXRUNTIME_LIB"

// RuntimeLibraryNames are the file names of the ONNX Runtime shared
// library on this OS, in the order they are tried.
func RuntimeLibraryNames() []string {
	switch runtime.GOOS {
	case "darwin":
		return []string{"libonnxruntime.dylib"}
	case "windows":
		return []string{"onnxruntime.dll"}
	}
	return []string{"libonnxruntime.so.1", "libonnxruntime.so"}
}

// RuntimeDir returns the cache directory where the ONNX Runtime library
// may be placed: <cache root>/onnxruntime.
func RuntimeDir(cacheDir string) (string, error) {
	root, err := hfhub.CacheDir(cacheDir)
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "onnxruntime"), nil
}

// FindRuntimeLibrary returns the ONNX Runtime shared library to load: the
// explicit path (a flag), else $MOAT_ONNXRUNTIME_LIB, else the first of
// [RuntimeLibraryNames] in [RuntimeDir]. A named path must exist.
func FindRuntimeLibrary(explicit, cacheDir string) (string, error) {
	for _, c := range []struct{ what, path string }{{"runtime library", explicit}, {RuntimeEnv, os.Getenv(RuntimeEnv)}} {
		if c.path == "" {
			continue
		}
		if fi, err := os.Stat(c.path); err != nil || fi.IsDir() {
			return "", fmt.Errorf("onnx runtime: %s %q: not a library file", c.what, c.path)
		}
		return c.path, nil
	}
	dir, err := RuntimeDir(cacheDir)
	if err != nil {
		return "", err
	}
	for _, n := range RuntimeLibraryNames() {
		p := filepath.Join(dir, n)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	return "", fmt.Errorf("onnx runtime: no %s: set %s to the library's path or copy it into %s (npm's onnxruntime-node package ships it)",
		RuntimeLibraryNames()[0], RuntimeEnv, dir)
}

// SnapshotDir returns the cache directory that holds the files of the
// model at revision ("" means [Revision]), whether or not they are there.
func SnapshotDir(cacheDir, revision string) (string, error) {
	rev, err := ParseRevision(revision)
	if err != nil {
		return "", err
	}
	root, err := hfhub.CacheDir(cacheDir)
	if err != nil {
		return "", err
	}
	return hfhub.Cache{Root: root}.SnapshotDir(Repository, rev), nil
}
