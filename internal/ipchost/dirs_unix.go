//go:build unix

package ipchost

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/moat-sandbox/moat/internal/statedir"
)

// bases are the directories an IPC directory may be made in, best
// first: the user's runtime directory ($XDG_RUNTIME_DIR, else
// /run/user/UID), or, without one, a moat directory in the user's cache
// directory; each only if it is a directory of this user's that nobody
// else may enter.
func bases() []string {
	var out []string
	uid := os.Geteuid()
	private := func(d string, create bool) {
		if !filepath.IsAbs(d) {
			return
		}
		if create {
			_ = os.MkdirAll(d, 0o700)
		}
		r, err := filepath.EvalSymlinks(d)
		if err != nil {
			return
		}
		fi, err := os.Lstat(r)
		if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 {
			return
		}
		if owner, ok := statedir.FileOwner(fi); !ok || owner != uid {
			return
		}
		out = append(out, r)
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		private(d, false)
	}
	private("/run/user/"+strconv.Itoa(uid), false)
	if len(out) > 0 {
		return out // the cache directory is made only when needed
	}
	if d, err := os.UserCacheDir(); err == nil {
		private(filepath.Join(d, "moat-ipc"), true)
	}
	return out
}

// sweepOnce removes, once per process and base, the IPC directories a
// moat killed before Close left in base: a moat-*-ipc-* directory of this
// user's whose socket refuses connections (no server listens on it any
// more), or that has no socket and is older than a minute (a crash
// between the directory and the socket).
func sweepOnce(base string) {
	swept.Lock()
	defer swept.Unlock()
	if swept.bases[base] {
		return
	}
	if swept.bases == nil {
		swept.bases = map[string]bool{}
	}
	swept.bases[base] = true
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	uid := os.Geteuid()
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || !strings.HasPrefix(name, "moat-") || !strings.Contains(name, "-ipc-") {
			continue
		}
		dir := filepath.Join(base, name)
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() {
			continue
		}
		if owner, ok := statedir.FileOwner(fi); !ok || owner != uid {
			continue
		}
		if staleDir(dir, fi.ModTime()) {
			_ = os.RemoveAll(dir)
		}
	}
}

var swept struct {
	sync.Mutex
	bases map[string]bool
}

// staleDir reports whether no server can be behind dir.
func staleDir(dir string, mtime time.Time) bool {
	sock := filepath.Join(dir, socketName)
	fi, err := os.Lstat(sock)
	if errors.Is(err, fs.ErrNotExist) {
		return time.Since(mtime) > time.Minute
	}
	if err != nil || fi.Mode().Type() != os.ModeSocket {
		return false
	}
	c, err := net.DialTimeout("unix", sock, time.Second)
	if err == nil {
		c.Close()
		return false
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}

// UserCanReplace reports whether this user may write path, or the
// directory that holds it (and so rename another file over it).
func UserCanReplace(path string) bool {
	return syscall.Access(path, 2) == nil || syscall.Access(filepath.Dir(path), 2) == nil // W_OK
}
