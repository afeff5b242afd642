package session

// The file API of a session: the host side of internal/fileserve. The
// server runs inside the session's sandbox (files_server.go), so every
// call has exactly the sandbox's rights and view; this side bounds,
// serialises and checks the calls, and reads every reply as hostile
// (files_reply.go).

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/fileserve"
	_ "github.com/moat-sandbox/moat/internal/reexec" // the file server's role, on every OS
)

// Place is a directory the file API may reach: the working directory or a
// grant, absolute and clean. Writable false serves it read-only. A place
// that is not a directory is left out. The zero value names nothing.
type Place struct {
	Path     string
	Writable bool
}

// FileLimits bound the file API. Zero values mean the defaults.
type FileLimits struct {
	// MaxFileBytes bounds a write; 0 means 64 MiB. The sandbox's own
	// file-size limit applies too, since the writes happen inside it.
	MaxFileBytes int64
	// MaxReadBytes bounds a read; 0 means 16 MiB.
	MaxReadBytes int64
	// MaxEntries bounds a listing; 0 means 10,000.
	MaxEntries int
	// SandboxFileSize is the sandbox's own file-size limit (its
	// Limits.FileSizeBytes, after a session's narrowing): a write larger
	// cannot succeed, so it bounds a write too, and a refusal names it and
	// its settings. 0 means moat's default (4 GiB); negative means none.
	SandboxFileSize int64
	// CommandTimeout is the sandbox's Limits.Timeout, which ends every
	// command of it, the file server too: the server is then replaced,
	// idle, at half of it (and each call's deadline is at most a quarter),
	// so that the limit never ends it and records no refusal. 0 means the
	// sandbox has none. (A server idle for a few seconds is retired
	// anyway, and the next call starts another.)
	CommandTimeout time.Duration
}

// Default file limits and the deadline of one call.
const (
	DefaultMaxFileBytes = 64 << 20
	DefaultMaxReadBytes = 16 << 20
	DefaultMaxEntries   = 10000
	fileCallTimeout     = 10 * time.Second
)

// Files is the file API of one session: a file server inside its sandbox,
// started by [StartFiles], retired when idle for a few seconds, started
// again by the next call, and restarted when it dies or breaks the
// protocol. Calls are serialised. The zero value is unusable.
type Files struct {
	mu      sync.Mutex
	sb      *moat.Sandbox
	exe     string
	cfg     fileserve.Config
	timeout time.Duration // a call's deadline
	recycle time.Duration // a server's age at which it is replaced; 0 means never
	idle    time.Duration // how long a server waits for a call before it is retired
	sizeCap bool          // cfg.MaxFileBytes is the sandbox's file-size limit
	srv     *fileServer   // nil when none runs
	args    []string      // the server's arguments; nil means its config (tests replace it)
	nextID  uint64
	cur     atomic.Pointer[fileServer] // srv, for Close to stop a call in flight
	closed  atomic.Bool
}

// StartFiles starts the file API of sb over places: the working directory
// and the grants, as the sandbox sees them (the same paths as the host's).
// The file server is this program's binary, which the sandbox must be
// able to execute ([GrantSelf] before moat.New) and must not be able to
// write. Close it before or with the sandbox.
func StartFiles(sb *moat.Sandbox, places []Place, lim FileLimits) (*Files, error) {
	if sb == nil {
		return nil, errorf(CodeInternal, "file API: no sandbox")
	}
	exe, err := selfBinary()
	if err != nil {
		return nil, internalError("file API", err)
	}
	var served []fileserve.Place
	for _, p := range places {
		if fi, err := os.Stat(p.Path); err != nil || !fi.IsDir() || !isAbsClean(p.Path) {
			continue
		}
		served = append(served, fileserve.Place{Path: p.Path, Writable: p.Writable})
	}
	if err := checkServerBinary(exe, served); err != nil {
		return nil, internalError("file API", err)
	}
	maxFile, sizeCap := writeBound(lim)
	f := &Files{sb: sb, exe: exe, timeout: fileCallTimeout, idle: fileServerIdle, recycle: lim.CommandTimeout / 2, sizeCap: sizeCap, cfg: fileserve.Config{
		WorkDir: sb.WorkDir(), Places: served,
		MaxFileBytes: maxFile,
		MaxReadBytes: orDefault(lim.MaxReadBytes, DefaultMaxReadBytes),
		MaxEntries:   int(orDefault(int64(lim.MaxEntries), DefaultMaxEntries)),
	}}
	if lim.CommandTimeout > 0 {
		f.timeout = min(f.timeout, lim.CommandTimeout/4)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.start(); err != nil {
		return nil, err
	}
	return f, nil
}

// writeBound is the most a write may carry: MaxFileBytes, or the
// sandbox's file-size limit where that is smaller (then true).
func writeBound(lim FileLimits) (int64, bool) {
	b := orDefault(lim.MaxFileBytes, DefaultMaxFileBytes)
	fs := lim.SandboxFileSize
	if fs == 0 {
		fs = moat.DefaultFileSizeBytes
	}
	if fs > 0 && fs <= b {
		return fs, true
	}
	return b, false
}

// tooLarge is the refusal of a write of n bytes (-1: unknown, the sandbox
// refused it) at path: it names the bound, and the settings when the
// bound is the sandbox's file-size limit.
func (f *Files) tooLarge(path string, n int64) *Error {
	size := ""
	if n >= 0 {
		size = fmt.Sprintf(" %d bytes is", n)
	}
	if f.sizeCap {
		return settingErrorf(CodeTooLarge, "limits.max-file-size", "%q:%s larger than the session's file-size limit of %d bytes (limits.max-file-size, or narrow.limits.file_size_bytes)", path, size, f.cfg.MaxFileBytes)
	}
	return errorf(CodeTooLarge, "%q:%s larger than the %d bytes a write of the file API may carry", path, size, f.cfg.MaxFileBytes)
}

func orDefault(v, d int64) int64 {
	if v <= 0 {
		return d
	}
	return v
}

// isAbsClean reports whether p is absolute and clean, in the sandbox's
// slash-separated view.
func isAbsClean(p string) bool {
	if !strings.HasPrefix(p, "/") || strings.IndexByte(p, 0) >= 0 {
		return false
	}
	return p == "/" || (!strings.HasSuffix(p, "/") && !strings.Contains(p, "//") &&
		!strings.Contains(p+"/", "/./") && !strings.Contains(p+"/", "/../"))
}

// Read returns at most max bytes of the regular file at path (max 0 or
// above the limit means MaxReadBytes), and its description: len(data) <
// info.Size says the file is larger. A FIFO, device, socket, directory or
// a link at the path is CodeNotRegular, at once.
func (f *Files) Read(path string, max int64) ([]byte, FileInfo, error) {
	if max <= 0 || max > f.cfg.MaxReadBytes {
		max = f.cfg.MaxReadBytes
	}
	rep, err := f.call(fileserve.Request{Op: fileserve.OpRead, Path: path, Max: max})
	if err != nil {
		return nil, FileInfo{}, err
	}
	return rep.Data, fileInfo(*rep.Info), nil
}

// Write replaces the file at path with data, mode's permission bits
// (setuid, setgid and sticky dropped; 0 means 0644): a new file is made
// beside it and renamed over the name, so a hard link or a link at the
// name is replaced, never written through.
func (f *Files) Write(path string, data []byte, mode os.FileMode) (FileInfo, error) {
	if int64(len(data)) > f.cfg.MaxFileBytes {
		return FileInfo{}, f.tooLarge(path, int64(len(data)))
	}
	perm := uint32(mode.Perm())
	if perm == 0 {
		perm = 0o644
	}
	rep, err := f.call(fileserve.Request{Op: fileserve.OpWrite, Path: path, Data: data, Mode: perm})
	if err != nil {
		return FileInfo{}, err
	}
	return fileInfo(*rep.Info), nil
}

// List returns the entries of the directory at path, sorted by name, at
// most MaxEntries; the bool says some were left out.
func (f *Files) List(path string) ([]FileInfo, bool, error) {
	rep, err := f.call(fileserve.Request{Op: fileserve.OpList, Path: path})
	if err != nil {
		return nil, false, err
	}
	out := make([]FileInfo, 0, len(rep.Entries))
	for _, e := range rep.Entries {
		out = append(out, fileInfo(e))
	}
	return out, rep.Truncated, nil
}

// Stat describes path, never following a final link.
func (f *Files) Stat(path string) (FileInfo, error) {
	rep, err := f.call(fileserve.Request{Op: fileserve.OpStat, Path: path})
	if err != nil {
		return FileInfo{}, err
	}
	return fileInfo(*rep.Info), nil
}

// Close stops the file server, at once even during a call, which then
// fails; later calls return CodeClosed. It is idempotent.
func (f *Files) Close() error {
	f.closed.Store(true)
	if s := f.cur.Load(); s != nil {
		s.cancel() // kills it; the call in flight reads the end
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stop()
	return nil
}

// fileInfo is the API's description of a checked reply's Info.
func fileInfo(in fileserve.Info) FileInfo {
	return FileInfo{Path: in.Path, Name: in.Name, Type: in.Type, Size: in.Size,
		Mode: fmt.Sprintf("%04o", in.Mode), MTime: time.Unix(0, in.MTimeNS).UTC().Format(time.RFC3339Nano),
		Target: in.Target}
}
