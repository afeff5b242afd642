package hfhub

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Client fetches repository files from a hub into a [Cache]. The zero
// value is not usable: set Endpoint and Cache (see [Endpoint], [CacheDir]).
type Client struct {
	// Endpoint is the hub's base URL, such as https://huggingface.co.
	Endpoint string
	// Token, when not "", is sent as "Authorization: Bearer <token>" to
	// the Endpoint's own origin (scheme, host and port) only: never to
	// storage the hub redirects to, nor after a redirect chain has left
	// that origin.
	Token string
	// Cache is where files land.
	Cache Cache
	// HTTP is the client used; nil means one with header and stall
	// timeouts and no overall timeout (the files are large). Its
	// CheckRedirect is replaced by the client's own policy (at most 5
	// redirects, never https to http, the token kept to the hub's origin).
	HTTP *http.Client
	// MaxSize is the most bytes one file may have, whatever the hub says;
	// zero means [DefaultMaxSize].
	MaxSize int64
	// Force downloads a file again even if the cache holds it.
	Force bool
	// Progress, when not nil, receives a progress bar per download.
	Progress io.Writer
	// StallTimeout ends a download that receives nothing for this long;
	// zero means 60 seconds.
	StallTimeout time.Duration
	// UserAgent is sent with every request; "" means "moat".
	UserAgent string
}

// DefaultMaxSize is the ceiling on one file's size when
// [Client.MaxSize] is zero.
const DefaultMaxSize = 16 << 30

// Result says what [Client.Fetch] did for one file.
type Result struct {
	// File is the repository-relative file name.
	File string
	// Path is the file's snapshot path in the cache.
	Path string
	// Size is the file's size in bytes.
	Size int64
	// Downloaded is true when bytes were fetched, false when the cache
	// already had the file (or its blob).
	Downloaded bool
	// Resumed is true when the download continued an earlier partial one.
	Resumed bool
}

// meta is what a HEAD request says about a file.
type meta struct {
	etag     string // the hash: sha256 for LFS files, a git blob sha1 otherwise
	size     int64
	location string // where to GET it
}

// Fetch makes file of repo at revision present in the cache and returns
// its snapshot path. Without Force a cached file is returned at once,
// without touching the network. Otherwise it reads the file's size and
// content hash from the tree of the pinned revision (the hub's paths-info
// API), refuses a file over MaxSize, asks the download URL (HEAD,
// X-Linked-Etag/X-Linked-Size for LFS files) and refuses it unless it
// announces the same size and hash, resumes or starts the download into
// blobs/<hash>.incomplete, reading at most the revision's size (one byte
// more removes the file), checks size and hash against the revision,
// syncs, renames it to blobs/<hash> and links the snapshot entry to it.
func (c *Client) Fetch(ctx context.Context, repo, revision, file string) (Result, error) {
	res := Result{File: file, Path: c.Cache.SnapshotPath(repo, revision, file)}
	if err := checkRepo(repo); err != nil {
		return res, err
	}
	if err := CheckFileName(file); err != nil {
		return res, err
	}
	if revision == "" || strings.ContainsAny(revision, "/\\") || revision == "." || revision == ".." {
		return res, fmt.Errorf("revision %q: want a commit id", revision)
	}
	if !c.Force {
		if p, err := c.Cache.Lookup(repo, revision, file); err == nil {
			if fi, err := os.Stat(p); err == nil {
				res.Size = fi.Size()
			}
			return res, nil
		}
	}
	want, err := c.revisionFile(ctx, repo, revision, file)
	if err != nil {
		return res, fmt.Errorf("%s: %w", file, err)
	}
	if max := c.maxSize(); want.size > max {
		return res, fmt.Errorf("%s: revision %s lists %d bytes, over the %d-byte ceiling of one file", file, revision, want.size, max)
	}
	m, err := c.head(ctx, repo, revision, file)
	if err != nil {
		return res, fmt.Errorf("%s: %w", file, err)
	}
	if err := agree(m, want, revision); err != nil {
		return res, fmt.Errorf("%s: %w", file, err)
	}
	res.Size = m.size
	blobs := filepath.Join(c.Cache.RepoDir(repo), "blobs")
	if err := os.MkdirAll(blobs, 0o755); err != nil {
		return res, fmt.Errorf("%s: %w", file, err)
	}
	blob := filepath.Join(blobs, m.etag)
	if fi, err := os.Stat(blob); err == nil && fi.Mode().IsRegular() && fi.Size() == m.size && !c.Force {
		// The blob was renamed into place only after its hash checked out.
	} else {
		res.Downloaded = true
		resumed, err := c.download(ctx, m, file, blob)
		res.Resumed = resumed
		if err != nil {
			return res, fmt.Errorf("%s: %w", file, err)
		}
	}
	if err := linkSnapshot(blob, res.Path); err != nil {
		return res, fmt.Errorf("%s: %w", file, err)
	}
	return res, nil
}

func (c *Client) stallTimeout() time.Duration {
	if c.StallTimeout > 0 {
		return c.StallTimeout
	}
	return 60 * time.Second
}

func (c *Client) maxSize() int64 {
	if c.MaxSize > 0 {
		return c.MaxSize
	}
	return DefaultMaxSize
}

// agree checks that what the download URL announced is what the pinned
// revision's tree lists: the download's headers are not trusted alone.
func agree(m meta, want fileInfo, revision string) error {
	if m.etag != want.hash {
		kind := "sha256"
		if len(want.hash) == 40 {
			kind = "git blob sha1"
		}
		return fmt.Errorf("%s mismatch: the download announces %s, revision %s lists %s", kind, m.etag, revision, want.hash)
	}
	if m.size != want.size {
		return fmt.Errorf("size mismatch: the download announces %d bytes, revision %s lists %d", m.size, revision, want.size)
	}
	return nil
}

// httpClient returns the client to use, with the redirect policy of
// [Client.checkRedirect] in place.
func (c *Client) httpClient() *http.Client {
	var hc http.Client
	if c.HTTP != nil {
		hc = *c.HTTP
	} else {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.ResponseHeaderTimeout = 60 * time.Second
		hc.Transport = t
	}
	hc.CheckRedirect = c.checkRedirect
	return &hc
}

func (c *Client) fileURL(repo, revision, file string) string {
	segs := strings.Split(file, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.TrimRight(c.Endpoint, "/") + "/" + repo + "/resolve/" + url.PathEscape(revision) + "/" + strings.Join(segs, "/")
}

func (c *Client) newRequest(ctx context.Context, method, u string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return nil, err
	}
	ua := c.UserAgent
	if ua == "" {
		ua = "moat"
	}
	req.Header.Set("User-Agent", ua)
	req.Header.Set("Accept-Encoding", "identity") // sizes and hashes are of the raw bytes
	if c.sendsToken(req.URL) {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	return req, nil
}

// head asks the hub for the file's hash, size and download location. It
// follows redirects without X-Linked-Etag (a renamed repository), under the
// policy of [Client.checkRedirect], and stops at the first one that carries
// X-Linked-Etag and X-Linked-Size: an LFS file's pointer to its storage.
func (c *Client) head(ctx context.Context, repo, revision, file string) (meta, error) {
	u := c.fileURL(repo, revision, file)
	hc := *c.httpClient()
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	token := true // false once the chain has left the hub's origin
	for hops := 0; ; hops++ {
		req, err := c.newRequest(ctx, http.MethodHead, u)
		if err != nil {
			return meta{}, err
		}
		token = token && c.sendsToken(req.URL)
		if !token {
			req.Header.Del("Authorization")
		}
		resp, err := hc.Do(req)
		if err != nil {
			return meta{}, fmt.Errorf("asking the hub: %w", c.transportError(ctx, err))
		}
		resp.Body.Close()
		if err := statusError(resp, c.Token != ""); err != nil {
			return meta{}, err
		}
		loc := resp.Header.Get("Location")
		redirect := resp.StatusCode >= 300 && resp.StatusCode < 400
		if redirect && loc == "" {
			return meta{}, fmt.Errorf("hub answered %s without a Location", resp.Status)
		}
		if redirect && resp.Header.Get("X-Linked-Etag") == "" {
			next, err := resp.Request.URL.Parse(loc)
			if err != nil {
				return meta{}, fmt.Errorf("hub redirect %q: %w", loc, err)
			}
			if err := checkHop(resp.Request.URL, next, hops); err != nil {
				return meta{}, err
			}
			u = next.String()
			continue
		}
		if commit := resp.Header.Get("X-Repo-Commit"); commit != "" && isHex(revision, 40) && !strings.EqualFold(commit, revision) {
			return meta{}, fmt.Errorf("hub served commit %s, not the requested %s", commit, revision)
		}
		m := meta{location: u}
		if redirect {
			next, err := resp.Request.URL.Parse(loc)
			if err != nil {
				return meta{}, fmt.Errorf("hub redirect %q: %w", loc, err)
			}
			if err := checkHop(resp.Request.URL, next, hops); err != nil {
				return meta{}, err
			}
			m.location = next.String()
		}
		etag := resp.Header.Get("X-Linked-Etag")
		if etag == "" {
			etag = resp.Header.Get("ETag")
		}
		m.etag = normalizeEtag(etag)
		if !isHex(m.etag, 64) && !isHex(m.etag, 40) {
			return meta{}, fmt.Errorf("hub gave no checkable hash (etag %q): refusing a file that cannot be verified", etag)
		}
		size := resp.Header.Get("X-Linked-Size")
		if size == "" {
			size = resp.Header.Get("Content-Length")
		}
		if size == "" && resp.ContentLength >= 0 {
			size = strconv.FormatInt(resp.ContentLength, 10)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(size), 10, 64)
		if err != nil || n < 0 {
			return meta{}, fmt.Errorf("hub gave no file size (%q)", size)
		}
		m.size = n
		return m, nil
	}
}

// statusError turns a failed hub answer into an error that says what to do.
func statusError(resp *http.Response, haveToken bool) error {
	switch {
	case resp.StatusCode < 400:
		return nil
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		if haveToken {
			return fmt.Errorf("hub refused access (%s) with the token from HF_TOKEN or the token file", resp.Status)
		}
		return fmt.Errorf("hub refused access (%s); set HF_TOKEN or write a token to $HF_HOME/token", resp.Status)
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("not found on the hub (%s): check --revision and the variant", resp.Status)
	}
	return fmt.Errorf("hub answered %s", resp.Status)
}

// download brings blob.incomplete to the announced size, resuming what is
// there, checks it and renames it to blob. It reports whether it resumed.
func (c *Client) download(ctx context.Context, m meta, file, blob string) (bool, error) {
	tmp := blob + ".incomplete"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return false, err
	}
	defer f.Close()
	have, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return false, err
	}
	if have > m.size {
		if err := restart(f); err != nil {
			return false, err
		}
		have = 0
	}
	resumed := have > 0
	if have < m.size {
		got, err := c.get(ctx, m, file, f, have)
		if errors.Is(err, errOversize) {
			f.Close()
			os.Remove(tmp) // no part of a file that broke its size is kept
			return false, err
		}
		if err != nil {
			return resumed && got, err
		}
		resumed = resumed && got
	}
	if err := f.Sync(); err != nil {
		return resumed, err
	}
	if err := verify(f, m); err != nil {
		f.Close()
		os.Remove(tmp) // a wrong file is no base to resume from
		return resumed, err
	}
	if err := f.Close(); err != nil {
		return resumed, err
	}
	if err := os.Rename(tmp, blob); err != nil {
		return resumed, err
	}
	syncDir(filepath.Dir(blob))
	return resumed, nil
}

// get appends the rest of the file to f, which holds have bytes. It reports
// whether the hub honoured the Range request (false: it restarted).
func (c *Client) get(ctx context.Context, m meta, file string, f *os.File, have int64) (bool, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, err := c.newRequest(ctx, http.MethodGet, m.location)
	if err != nil {
		return false, err
	}
	if have > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", have))
	}
	stall := c.stallTimeout()
	errStalled := fmt.Errorf("download stalled: nothing received for %v", stall)
	timer := time.AfterFunc(stall, func() { cancel(errStalled) })
	defer timer.Stop()
	resp, err := c.httpClient().Do(req)
	if err != nil {
		if cause := context.Cause(ctx); cause == errStalled {
			err = cause
		} else {
			err = c.transportError(ctx, err)
		}
		return false, fmt.Errorf("downloading: %w", err)
	}
	defer resp.Body.Close()
	ranged := false
	switch {
	case resp.StatusCode == http.StatusPartialContent && have > 0:
		start, err := contentRangeStart(resp.Header.Get("Content-Range"))
		if err != nil || start != have {
			return false, fmt.Errorf("hub answered the resume with range %q, want start %d", resp.Header.Get("Content-Range"), have)
		}
		ranged = true
	case resp.StatusCode == http.StatusOK:
		if have > 0 {
			if err := restart(f); err != nil {
				return false, err
			}
			have = 0
		}
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable:
		restart(f)
		return false, fmt.Errorf("hub refused to resume (%s); the partial file was dropped, run again", resp.Status)
	default:
		if err := statusError(resp, c.Token != ""); err != nil {
			return false, err
		}
		return false, fmt.Errorf("hub answered %s", resp.Status)
	}
	if _, err := f.Seek(have, io.SeekStart); err != nil {
		return ranged, err
	}
	bar := newBar(c.Progress, file, m.size, have)
	want := m.size - have
	body := &stallReader{r: resp.Body, timer: timer, d: stall}
	n, err := io.Copy(io.MultiWriter(f, bar), io.LimitReader(body, want+1))
	bar.done(err == nil && n == want)
	if err != nil {
		if cause := context.Cause(ctx); cause == errStalled {
			err = cause
		}
		return ranged, fmt.Errorf("downloading: %w (run again to resume)", err)
	}
	if n != want {
		if n > want {
			return ranged, fmt.Errorf("%w: hub sent more than the revision's %d bytes; the file was discarded", errOversize, m.size)
		}
		return ranged, fmt.Errorf("download ended after %d of %d bytes (run again to resume)", have+n, m.size)
	}
	return ranged, nil
}

// errOversize marks a download that sent more than the file's size.
var errOversize = errors.New("oversize download")

// stallReader restarts the stall timer on every read that brings bytes.
type stallReader struct {
	r     io.Reader
	timer *time.Timer
	d     time.Duration
}

func (s *stallReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if n > 0 {
		s.timer.Reset(s.d)
	}
	return n, err
}

func restart(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.Seek(0, io.SeekStart)
	return err
}

// verify checks the file's size and hash against what the hub announced:
// sha256 for a 64-digit etag (LFS), the git blob sha1 for a 40-digit one.
func verify(f *os.File, m meta) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() != m.size {
		return fmt.Errorf("size mismatch: have %d bytes, the hub announced %d", fi.Size(), m.size)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	var h hash.Hash
	kind := "sha256"
	if len(m.etag) == 64 {
		h = sha256.New()
	} else {
		kind = "git blob sha1"
		h = sha1.New()
		fmt.Fprintf(h, "blob %d\x00", m.size)
	}
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != m.etag {
		return fmt.Errorf("%s mismatch: got %s, the hub announced %s; the file was discarded", kind, got, m.etag)
	}
	return nil
}

// linkSnapshot points the snapshot entry at blob: a relative symbolic link
// created under a temporary name and renamed over the entry, or, where
// links are not possible, a copy renamed the same way.
func linkSnapshot(blob, snap string) error {
	if err := os.MkdirAll(filepath.Dir(snap), 0o755); err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s.tmp-%d", snap, time.Now().UnixNano())
	rel, err := filepath.Rel(filepath.Dir(snap), blob)
	if err != nil {
		rel = blob
	}
	if err := os.Symlink(rel, tmp); err != nil {
		if err := copyFile(blob, tmp); err != nil {
			os.Remove(tmp)
			return err
		}
	}
	if err := os.Rename(tmp, snap); err != nil {
		os.Remove(tmp)
		return err
	}
	syncDir(filepath.Dir(snap))
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// syncDir makes a rename in dir durable; where directories cannot be
// synced (Windows) it does nothing.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// normalizeEtag strips a weak marker and quotes and lowercases the rest.
func normalizeEtag(e string) string {
	e = strings.TrimSpace(e)
	e = strings.TrimPrefix(e, "W/")
	return strings.ToLower(strings.Trim(e, `"`))
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') && (c < 'A' || c > 'F') {
			return false
		}
	}
	return true
}

// contentRangeStart returns the first byte of "bytes START-END/TOTAL".
func contentRangeStart(cr string) (int64, error) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(cr), "bytes ")
	if !ok {
		return 0, errors.New("not a byte range")
	}
	start, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, errors.New("not a byte range")
	}
	return strconv.ParseInt(strings.TrimSpace(start), 10, 64)
}
