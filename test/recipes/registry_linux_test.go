//go:build linux

package recipes_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// npmRegistry is an npm tarball registry on the loopback stand-in address:
// for any valid package name it serves a packument with one version,
// 1.0.0, and that version's tarball, a package whose index.js exports a
// function returning "NAME ok". It is what "registry.npmjs.org" becomes.
type npmRegistry struct {
	Addr      string       // host:port
	Tarballs  atomic.Int32 // tarballs served
	Packument atomic.Int32 // packuments served
}

// npmName is a package name the registry serves: lower case, optionally
// scoped.
var npmName = regexp.MustCompile(`^(@[a-z0-9][a-z0-9._-]*/)?[a-z0-9][a-z0-9._-]*$`)

// startNpmRegistry starts the registry on standIn:0; it stops when the
// test ends.
func startNpmRegistry(t *testing.T) *npmRegistry {
	t.Helper()
	ln, err := net.Listen("tcp", standIn+":0")
	if err != nil {
		t.Fatalf("the npm registry stand-in cannot listen on %s: %v", standIn, err)
	}
	reg := &npmRegistry{Addr: ln.Addr().String()}
	srv := &http.Server{Handler: reg, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return reg
}

// ServeHTTP answers GET /NAME (or /@SCOPE%2fNAME) with the packument and
// GET /NAME/-/BASE-1.0.0.tgz with the tarball.
func (reg *npmRegistry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p, err := url.PathUnescape(r.URL.EscapedPath())
	if err != nil || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	p = strings.TrimPrefix(p, "/")
	if name, file, ok := strings.Cut(p, "/-/"); ok {
		if !npmName.MatchString(name) || file != tarballName(name) {
			http.NotFound(w, r)
			return
		}
		reg.Tarballs.Add(1)
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(npmTarball(name))
		return
	}
	if !npmName.MatchString(p) {
		http.NotFound(w, r)
		return
	}
	reg.Packument.Add(1)
	tgz := npmTarball(p)
	sha1sum := sha1.Sum(tgz)
	doc := map[string]any{
		"name":      p,
		"dist-tags": map[string]string{"latest": "1.0.0"},
		"versions": map[string]any{"1.0.0": map[string]any{
			"name": p, "version": "1.0.0", "main": "index.js",
			"dist": map[string]string{
				"tarball":   "http://" + reg.Addr + "/" + p + "/-/" + tarballName(p),
				"shasum":    hex.EncodeToString(sha1sum[:]),
				"integrity": npmIntegrity(tgz),
			},
		}},
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(doc)
}

// npmIntegrity is the subresource integrity string of tgz (sha512).
func npmIntegrity(tgz []byte) string {
	sum := sha512.Sum512(tgz)
	return "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
}

// tarballName is the file name of name's 1.0.0 tarball: its name without
// the scope.
func tarballName(name string) string {
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	return name + "-1.0.0.tgz"
}

// npmTarball is the gzipped tar of name's package, the same bytes each
// time (fixed times), so its integrity holds across requests.
func npmTarball(name string) []byte {
	files := []struct{ name, content string }{
		{"package/package.json", `{"name": "` + name + `", "version": "1.0.0", "main": "index.js"}` + "\n"},
		{"package/index.js", "module.exports = function () { return " + strings.ReplaceAll(`"`+name+` ok"`, "\\", "") + "; };\n"},
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, f := range files {
		tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.content)), ModTime: time.Unix(499162500, 0), Typeflag: tar.TypeReg})
		tw.Write([]byte(f.content))
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}
