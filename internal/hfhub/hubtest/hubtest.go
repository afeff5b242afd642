// Package hubtest serves a fake Hugging Face hub for tests: the file
// layout <repo>/resolve/<revision>/<file>, HEAD answers with the size and
// hash headers the real hub sends (X-Linked-Etag and X-Linked-Size behind a
// redirect for LFS files, ETag with the git blob sha1 for small ones), the
// revision's file list (POST /api/models/<repo>/paths-info/<revision>),
// Range requests, an optional required token, and injected faults. LFS
// content is served by a second listener (another port, so another origin),
// as the real hub sends it to separate storage.
package hubtest

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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

// Request is one request the hub saw. Storage is true for a request to
// the LFS storage listener rather than the hub itself.
type Request struct {
	Method, Path, Range, Authorization string
	Storage                            bool
}

// Hub is a fake hub. Set its fields before the first request; the zero
// value is not usable, use [New].
type Hub struct {
	// URL is the server's base URL, for HF_ENDPOINT.
	URL string
	// StorageURL is the base URL of the LFS storage listener.
	StorageURL string
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
	storage  *httptest.Server
	announce map[string]File   // HEAD announces this file's size and hash instead
	serveAs  map[string][]byte // GET sends these bytes instead
	redirect map[string]string // resolve/ of a file redirects here first
	tree     map[string]File   // the file list describes this file instead
	sizeAs   map[string]int64  // HEAD announces this size instead
}

// New starts a hub serving files of repo at revision; Close stops it.
func New(repo, revision string, files map[string]File) *Hub {
	h := &Hub{Repo: repo, Revision: revision, Files: files, cut: map[string]int64{}, badHash: map[string]bool{},
		announce: map[string]File{}, serveAs: map[string][]byte{}, redirect: map[string]string{}, tree: map[string]File{}, sizeAs: map[string]int64{}}
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	h.URL = h.srv.URL
	h.storage = httptest.NewServer(http.HandlerFunc(h.serveStorage))
	h.StorageURL = h.storage.URL
	return h
}

// Close stops the servers.
func (h *Hub) Close() {
	h.srv.Close()
	h.storage.Close()
}

// Announce makes HEAD of file announce the size and hash of f instead of
// the file's own (a hub, or a man in the middle, that lies in headers).
func (h *Hub) Announce(file string, f File) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.announce[file] = f
}

// AnnounceSize makes HEAD of file announce n bytes, whatever its hash.
func (h *Hub) AnnounceSize(file string, n int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sizeAs[file] = n
}

// ServeBytes makes every GET of file send b instead of its content, with a
// Content-Length that matches b.
func (h *Hub) ServeBytes(file string, b []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.serveAs[file] = b
}

// RedirectTo makes HEAD and GET of file's resolve/ URL answer with a 302
// to u (no X-Linked-Etag) until the request carries ?hop=1; u may be
// another origin.
func (h *Hub) RedirectTo(file, u string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.redirect[file] = u
}

// DescribeAs makes the revision's file list describe file as f.
func (h *Hub) DescribeAs(file string, f File) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.tree[file] = f
}

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

// serveStorage is the LFS storage listener: it wants no token, as the
// real hub's storage takes signed URLs.
func (h *Hub) serveStorage(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.requests = append(h.requests, Request{r.Method, r.URL.Path, r.Header.Get("Range"), r.Header.Get("Authorization"), true})
	h.mu.Unlock()
	name, ok := strings.CutPrefix(r.URL.Path, "/lfs/")
	if !ok {
		http.Error(w, "no such object", http.StatusNotFound)
		return
	}
	h.serveContent(w, r, name)
}

func (h *Hub) serve(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.requests = append(h.requests, Request{r.Method, r.URL.Path, r.Header.Get("Range"), r.Header.Get("Authorization"), false})
	h.mu.Unlock()
	if h.Token != "" && r.Header.Get("Authorization") != "Bearer "+h.Token {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	if r.URL.Path == "/api/models/"+h.Repo+"/paths-info/"+h.Revision && r.Method == http.MethodPost {
		h.servePathsInfo(w, r)
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
	to := h.redirect[name]
	if a, ok := h.announce[name]; ok {
		f = a
	}
	hash := Hash(f)
	if h.badHash[name] {
		hash = strings.Repeat("0", len(hash))
	}
	size := strconv.Itoa(len(f.Content))
	if n, ok := h.sizeAs[name]; ok {
		size = strconv.FormatInt(n, 10)
	}
	h.mu.Unlock()
	if to != "" && r.URL.Query().Get("hop") == "" {
		w.Header().Set("Location", to)
		w.WriteHeader(http.StatusFound)
		return
	}
	w.Header().Set("X-Repo-Commit", h.Revision)
	if f.LFS {
		w.Header().Set("X-Linked-Etag", `"`+hash+`"`)
		w.Header().Set("X-Linked-Size", size)
		w.Header().Set("ETag", `"lfs-pointer-etag"`)
		w.Header().Set("Location", h.StorageURL+"/lfs/"+name)
		w.WriteHeader(http.StatusFound)
		return
	}
	w.Header().Set("ETag", `"`+hash+`"`)
	if r.Method == http.MethodHead {
		w.Header().Set("Content-Length", size)
		w.WriteHeader(http.StatusOK)
		return
	}
	h.serveContent(w, r, name)
}

// pathInfo is one entry of the hub's paths-info answer.
type pathInfo struct {
	Type string   `json:"type"`
	Path string   `json:"path"`
	Oid  string   `json:"oid"`
	Size int      `json:"size"`
	LFS  *lfsInfo `json:"lfs,omitempty"`
}

type lfsInfo struct {
	Oid         string `json:"oid"`
	Size        int    `json:"size"`
	PointerSize int    `json:"pointerSize"`
}

// servePathsInfo answers the revision's file list for the paths asked.
func (h *Hub) servePathsInfo(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	out := []pathInfo{}
	h.mu.Lock()
	for _, p := range r.PostForm["paths"] {
		f, ok := h.Files[p]
		if t, lie := h.tree[p]; lie {
			f, ok = t, true
		}
		if !ok {
			continue
		}
		pointer := fmt.Sprintf("version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n", Hash(File{Content: f.Content, LFS: true}), len(f.Content))
		e := pathInfo{Type: "file", Path: p, Oid: Hash(File{Content: f.Content}), Size: len(f.Content)}
		if f.LFS {
			e.Oid = Hash(File{Content: []byte(pointer)})
			e.Size = len(pointer)
			e.LFS = &lfsInfo{Oid: Hash(f), Size: len(f.Content), PointerSize: len(pointer)}
		}
		out = append(out, e)
	}
	h.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
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
	if b, ok := h.serveAs[name]; ok && r.Method == http.MethodGet {
		f.Content = b
	}
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
