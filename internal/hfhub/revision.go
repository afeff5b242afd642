package hfhub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// maxPathsInfo bounds the bytes read of the hub's answer about one file:
// the real answer is a few hundred bytes.
const maxPathsInfo = 64 << 10

// fileInfo is what the pinned revision's tree says about one file: its
// size and the hash of its content (the LFS sha256 for an LFS file, the git
// blob sha1 otherwise). The commit id names the tree, so a pinned revision
// pins these.
type fileInfo struct {
	size int64
	hash string
}

// pathsInfoEntry is one entry of POST /api/models/<repo>/paths-info/<rev>.
type pathsInfoEntry struct {
	Type string `json:"type"`
	Path string `json:"path"`
	Oid  string `json:"oid"`
	Size *int64 `json:"size"`
	LFS  *struct {
		Oid  string `json:"oid"`
		Size *int64 `json:"size"`
	} `json:"lfs"`
}

// revisionFile asks the hub's API for file's entry in the tree of
// revision, the commit the caller pinned.
func (c *Client) revisionFile(ctx context.Context, repo, revision, file string) (fileInfo, error) {
	// The answer is small: it has one stall timeout to come whole.
	ctx, cancel := context.WithTimeout(ctx, c.stallTimeout())
	defer cancel()
	u := strings.TrimRight(c.Endpoint, "/") + "/api/models/" + repo + "/paths-info/" + url.PathEscape(revision)
	form := url.Values{"paths": {file}, "expand": {"true"}}
	req, err := c.newRequest(ctx, http.MethodPost, u)
	if err != nil {
		return fileInfo{}, err
	}
	req.Body = io.NopCloser(strings.NewReader(form.Encode()))
	req.ContentLength = int64(len(form.Encode()))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(form.Encode())), nil }
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return fileInfo{}, fmt.Errorf("asking the hub for revision %s's file list: %w", revision, c.transportError(ctx, err))
	}
	defer resp.Body.Close()
	if err := statusError(resp, c.Token != ""); err != nil {
		return fileInfo{}, fmt.Errorf("revision %s's file list: %w", revision, err)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxPathsInfo+1))
	if err != nil {
		return fileInfo{}, fmt.Errorf("reading revision %s's file list: %w", revision, err)
	}
	if len(body) > maxPathsInfo {
		return fileInfo{}, fmt.Errorf("revision %s's file list: answer over %d bytes", revision, maxPathsInfo)
	}
	fi, err := parsePathsInfo(body, file)
	if err != nil {
		return fileInfo{}, fmt.Errorf("revision %s's file list: %w", revision, err)
	}
	return fi, nil
}

// parsePathsInfo finds file in a paths-info answer and returns its size and
// content hash. It fails unless exactly one well-formed file entry names
// file: a missing entry, a directory, a malformed hash or size, or two
// entries for one path are errors, never a guess.
func parsePathsInfo(body []byte, file string) (fileInfo, error) {
	var entries []pathsInfoEntry
	if err := json.Unmarshal(body, &entries); err != nil {
		return fileInfo{}, fmt.Errorf("not a JSON list of entries: %w", err)
	}
	var found *fileInfo
	for _, e := range entries {
		if e.Path != file {
			continue
		}
		if found != nil {
			return fileInfo{}, fmt.Errorf("%s is listed twice", file)
		}
		if e.Type != "file" {
			return fileInfo{}, fmt.Errorf("%s is a %q, not a file", file, e.Type)
		}
		var fi fileInfo
		switch {
		case e.LFS != nil:
			if e.LFS.Size == nil || *e.LFS.Size < 0 || !isHex(e.LFS.Oid, 64) {
				return fileInfo{}, fmt.Errorf("%s: malformed LFS entry (oid %q)", file, e.LFS.Oid)
			}
			fi = fileInfo{size: *e.LFS.Size, hash: strings.ToLower(e.LFS.Oid)}
		default:
			if e.Size == nil || *e.Size < 0 || !isHex(e.Oid, 40) {
				return fileInfo{}, fmt.Errorf("%s: malformed entry (oid %q)", file, e.Oid)
			}
			fi = fileInfo{size: *e.Size, hash: strings.ToLower(e.Oid)}
		}
		found = &fi
	}
	if found == nil {
		return fileInfo{}, errors.New(file + " is not in it")
	}
	return *found, nil
}
