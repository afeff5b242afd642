// Package hubtest serves a fake Hugging Face hub for tests: the file
// layout <repo>/resolve/<revision>/<file>, HEAD answers with the size and
// hash headers the real hub sends (X-Linked-Etag and X-Linked-Size behind a
// redirect for LFS files, ETag with the git blob sha1 for small ones), Range
// requests, an optional required token, and injected faults.
package hubtest

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
)

// File is one file of the fake repository. The zero value is an empty
// regular (non-LFS) file.
type File struct {
	Content []byte
	// LFS serves the file as the hub serves large files: HEAD and GET of
	// resolve/ redirect to storage, with X-Linked-Etag (sha256) and
	// X-Linked-Size.
	LFS bool
}

// Request is one request the hub saw.
type Request struct {
	Method, Path, Range, Authorization string
}

// Hub is a fake hub. Set its fields before the first request; the zero
// value is not usable, use [New].
type Hub struct {
	// URL is the server's base URL, for HF_ENDPOINT.
	URL string
	// Repo and Revision name the one repository and commit served.
	Repo, Revision string
	// Files maps repository paths to files.
	Files map[string]File
	// Token, when not "", must come as "Bearer <Token>" or the hub answers
	// 401.
	Token string

	mu       sync.Mutex
	requests []Request
	cut      map[string]int64 // cut the next GET of a file after n bytes
	badHash  map[string]bool  // announce a wrong hash
	noRange  bool
	srv      *httptest.Server
}

// New starts a hub serving files of repo at revision; Close stops it.
func New(repo, revision string, files map[string]File) *Hub {
	h := &Hub{Repo: repo, Revision: revision, Files: files, cut: map[string]int64{}, badHash: map[string]bool{}}
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	h.URL = h.srv.URL
	return h
}

// Close stops the server.
func (h *Hub) Close() { h.srv.Close() }

// CutAfter makes the next GET of file stop after n bytes, as a dropped
// connection would.
func (h *Hub) CutAfter(file string, n int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cut[file] = n
}

// AnnounceBadHash makes HEAD announce a hash that the file's bytes do not
// have.
func (h *Hub) AnnounceBadHash(file string, bad bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.badHash[file] = bad
}

// IgnoreRange makes the hub answer every GET with the whole file (200).
func (h *Hub) IgnoreRange(ignore bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.noRange = ignore
}

// Requests returns the requests seen so far.
func (h *Hub) Requests() []Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Request(nil), h.requests...)
}

// Hash returns what the hub announces for f: sha256 for LFS, the git blob
// sha1 otherwise.
func Hash(f File) string {
	if f.LFS {
		s := sha256.Sum256(f.Content)
		return hex.EncodeToString(s[:])
	}
	s := sha1.New()
	fmt.Fprintf(s, "blob %d\x00", len(f.Content))
	s.Write(f.Content)
	return hex.EncodeToString(s.Sum(nil))
}

func (h *Hub) serve(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.requests = append(h.requests, Request{r.Method, r.URL.Path, r.Header.Get("Range"), r.Header.Get("Authorization")})
	h.mu.Unlock()
	if h.Token != "" && r.Header.Get("Authorization") != "Bearer "+h.Token {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	if name, ok := strings.CutPrefix(r.URL.Path, "/lfs/"); ok {
		h.serveContent(w, r, name)
		return
	}
	prefix := "/" + h.Repo + "/resolve/" + h.Revision + "/"
	name, ok := strings.CutPrefix(r.URL.Path, prefix)
	f, exists := h.Files[name]
	if !ok || !exists {
		http.Error(w, "Entry not found", http.StatusNotFound)
		return
	}
	h.mu.Lock()
	hash := Hash(f)
	if h.badHash[name] {
		hash = strings.Repeat("0", len(hash))
	}
	h.mu.Unlock()
	w.Header().Set("X-Repo-Commit", h.Revision)
	if f.LFS {
		w.Header().Set("X-Linked-Etag", `"`+hash+`"`)
		w.Header().Set("X-Linked-Size", strconv.Itoa(len(f.Content)))
		w.Header().Set("ETag", `"lfs-pointer-etag"`)
		w.Header().Set("Location", h.URL+"/lfs/"+name)
		w.WriteHeader(http.StatusFound)
		return
	}
	w.Header().Set("ETag", `"`+hash+`"`)
	if r.Method == http.MethodHead {
		w.Header().Set("Content-Length", strconv.Itoa(len(f.Content)))
		w.WriteHeader(http.StatusOK)
		return
	}
	h.serveContent(w, r, name)
}

// serveContent sends a file's bytes, honouring Range unless told not to,
// and cuts the connection where a fault says so.
func (h *Hub) serveContent(w http.ResponseWriter, r *http.Request, name string) {
	f, ok := h.Files[name]
	if !ok {
		http.Error(w, "no such object", http.StatusNotFound)
		return
	}
	h.mu.Lock()
	cut, cutting := h.cut[name]
	if cutting && r.Method == http.MethodGet {
		delete(h.cut, name)
	}
	noRange := h.noRange
	h.mu.Unlock()
	if noRange {
		r.Header.Del("Range")
	}
	if !cutting || r.Method != http.MethodGet {
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.Content))
		return
	}
	// Announce the whole length, send n bytes, then drop the connection.
	start := int64(0)
	if rg := r.Header.Get("Range"); rg != "" {
		fmt.Sscanf(rg, "bytes=%d-", &start)
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, len(f.Content)-1, len(f.Content)))
		w.Header().Set("Content-Length", strconv.FormatInt(int64(len(f.Content))-start, 10))
		w.WriteHeader(http.StatusPartialContent)
	} else {
		w.Header().Set("Content-Length", strconv.Itoa(len(f.Content)))
		w.WriteHeader(http.StatusOK)
	}
	end := min(start+cut, int64(len(f.Content)))
	w.Write(f.Content[start:end])
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
	panic(http.ErrAbortHandler)
}
