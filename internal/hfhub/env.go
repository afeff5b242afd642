// Package hfhub downloads files from a Hugging Face-compatible hub into a
// cache laid out as the Hugging Face hub cache, so that files fetched by
// other tools are found and vice versa:
//
//	<root>/models--<owner>--<name>/blobs/<etag>
//	<root>/models--<owner>--<name>/snapshots/<revision>/<file> -> ../../blobs/<etag>
//
// Only [Client.Fetch] touches the network. Every file is written under a
// temporary name, checked against the size and hash the hub announced,
// synced and renamed, so an interrupted download never leaves a file that
// looks complete; the next Fetch resumes it with an HTTP Range request.
package hfhub

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// DefaultEndpoint is the hub used when HF_ENDPOINT is unset.
const DefaultEndpoint = "https://huggingface.co"

// Endpoint returns $HF_ENDPOINT without a trailing slash, or
// [DefaultEndpoint].
func Endpoint() string {
	if e := strings.TrimRight(strings.TrimSpace(os.Getenv("HF_ENDPOINT")), "/"); e != "" {
		return e
	}
	return DefaultEndpoint
}

// Home returns $HF_HOME, or ~/.cache/huggingface.
func Home() (string, error) {
	if h := os.Getenv("HF_HOME"); h != "" {
		return h, nil
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return "", errors.New("hugging face cache: no HF_HOME and no home directory")
	}
	return filepath.Join(home, ".cache", "huggingface"), nil
}

// CacheDir returns the hub cache root: dir when it is not "", else
// $HF_HOME/hub, else ~/.cache/huggingface/hub.
func CacheDir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	h, err := Home()
	if err != nil {
		return "", err
	}
	return filepath.Join(h, "hub"), nil
}

// Token returns the hub access token: $HF_TOKEN, else the first line of
// $HF_HOME/token (~/.cache/huggingface/token), else "". A token file that
// exists but cannot be read is an error.
func Token() (string, error) {
	if t := strings.TrimSpace(os.Getenv("HF_TOKEN")); t != "" {
		return t, nil
	}
	h, err := Home()
	if err != nil {
		return "", nil // no home, no token file: anonymous
	}
	b, err := os.ReadFile(filepath.Join(h, "token"))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", errors.New("hugging face token file: " + err.Error())
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(line), nil
}
