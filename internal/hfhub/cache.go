package hfhub

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Cache is a Hugging Face hub cache root. The zero value has no root and
// resolves paths relative to the current directory; use [CacheDir].
type Cache struct {
	// Root is the cache directory, such as ~/.cache/huggingface/hub.
	Root string
}

// RepoDir returns the directory of a model repository ("owner/name").
func (c Cache) RepoDir(repo string) string {
	return filepath.Join(c.Root, "models--"+strings.ReplaceAll(repo, "/", "--"))
}

// SnapshotPath returns where file of repo at revision lives in the cache,
// whether or not it is there.
func (c Cache) SnapshotPath(repo, revision, file string) string {
	return filepath.Join(c.RepoDir(repo), "snapshots", revision, filepath.FromSlash(file))
}

// SnapshotDir returns the snapshot directory of repo at revision.
func (c Cache) SnapshotDir(repo, revision string) string {
	return filepath.Join(c.RepoDir(repo), "snapshots", revision)
}

// ErrNotCached is matched by [errors.Is] when [Cache.Lookup] finds no file.
var ErrNotCached = errors.New("not in the model cache")

// Lookup returns the path of file of repo at revision if the cache holds it
// as a regular file (a link is followed), without touching the network.
func (c Cache) Lookup(repo, revision, file string) (string, error) {
	if err := CheckFileName(file); err != nil {
		return "", err
	}
	p := c.SnapshotPath(repo, revision, file)
	fi, err := os.Stat(p)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("%w: %s", ErrNotCached, p)
	}
	if err != nil {
		return "", fmt.Errorf("model cache: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("model cache: %s is not a regular file", p)
	}
	return p, nil
}

// CheckFileName refuses a repository file name that could leave the
// snapshot directory: it must be a clean, relative, slash-separated path.
func CheckFileName(file string) error {
	if file == "" || strings.HasPrefix(file, "/") || strings.Contains(file, "\\") ||
		path.Clean(file) != file || file == "." || file == ".." || strings.HasPrefix(file, "../") {
		return fmt.Errorf("model file %q: want a clean relative path", file)
	}
	return nil
}

// checkRepo refuses a repository name that is not "owner/name".
func checkRepo(repo string) error {
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") || owner == "." || owner == ".." || name == "." || name == ".." || strings.ContainsAny(repo, "\\ ") {
		return fmt.Errorf("repository %q: want owner/name", repo)
	}
	return nil
}
