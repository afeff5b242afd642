//go:build linux || darwin

package fileserve

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"

	"golang.org/x/sys/unix"
)

// server holds the places, each opened once at the start.
type server struct {
	cfg    Config
	paths  []string
	places []place
}

// place is one served directory: its descriptor, and an os.Root on it for
// kernels without openat2.
type place struct {
	Place
	fd   int
	root *os.Root
}

func open(cfg Config) (*server, error) {
	s := &server{cfg: cfg}
	for _, p := range cfg.Places {
		// A place the sandbox cannot open (gone, denied) is left out:
		// paths in it are refused.
		fd, err := unix.Open(p.Path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			fmt.Fprintf(os.Stderr, "fileserve: place %q left out: %v\n", p.Path, err)
			continue
		}
		root, err := os.OpenRoot(p.Path)
		if err != nil {
			unix.Close(fd)
			fmt.Fprintf(os.Stderr, "fileserve: place %q left out: %v\n", p.Path, err)
			continue
		}
		s.places = append(s.places, place{Place: p, fd: fd, root: root})
		s.paths = append(s.paths, p.Path)
	}
	return s, nil
}

func ignoreFileSizeSignal() { signal.Ignore(syscall.SIGXFSZ) }

// handle answers one request.
func (s *server) handle(req Request) Reply {
	t, err := resolve(s.paths, s.cfg.WorkDir, req.Path)
	switch {
	case errors.Is(err, errOutside):
		return fail(CodeRefused, 0, "")
	case err != nil:
		return fail(CodeBadRequest, 0, "")
	}
	pl := &s.places[t.Place]
	dir, err := pl.openDir(t.Dir)
	if err != nil {
		return faultOf(err)
	}
	defer unix.Close(dir)
	switch req.Op {
	case OpRead:
		return s.read(pl, t, dir, req.Max)
	case OpWrite:
		return s.write(pl, t, dir, req.Data, req.Mode)
	case OpList:
		return s.list(pl, t, dir)
	case OpStat:
		return s.stat(pl, t, dir)
	}
	return fail(CodeBadRequest, 0, "")
}

func fail(code string, errno syscall.Errno, kind string) Reply {
	return Reply{Error: &Fault{Code: code, Errno: int(errno), Kind: kind}}
}

// faultOf maps a system call's error to a Fault.
func faultOf(err error) Reply {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return fail(CodeInternal, 0, "")
	}
	switch errno {
	case unix.ENOENT, unix.ENOTDIR:
		return fail(CodeNotFound, errno, "")
	case unix.EXDEV, unix.EACCES, unix.EPERM, unix.EROFS, unix.EBUSY, unix.ELOOP:
		return fail(CodeRefused, errno, "")
	case unix.EFBIG:
		return fail(CodeTooLarge, errno, "")
	case unix.EISDIR:
		return fail(CodeNotRegular, errno, TypeDir)
	case unix.ENXIO, unix.ENODEV, unix.ENOTBLK:
		// Opening a socket, a device without its driver: whatever it
		// is, it is no regular file.
		return fail(CodeNotRegular, errno, "")
	}
	return fail(CodeInternal, errno, "")
}

// path is where t lies as the sandbox sees it; dir is t's directory.
func (pl *place) path(t target, dir int) string {
	if hasDotDot(t) {
		if d, ok := fdPath(dir); ok {
			return display(d, target{Dir: ".", Base: t.Base})
		}
	}
	return display(pl.Path, t)
}

// infoAt describes name in dir, never following a final link.
func infoAt(dir int, name, path string) (Info, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return Info{}, err
	}
	in := infoOf(&st, path)
	if in.Type == TypeSymlink {
		in.Target = readlinkAt(dir, name)
	}
	return in, nil
}

func infoOf(st *unix.Stat_t, path string) Info {
	sec, nsec := st.Mtim.Unix()
	return Info{Path: path, Name: baseName(path), Type: typeOf(uint32(st.Mode)), Size: max(st.Size, 0),
		Mode: uint32(st.Mode) & 0o7777, MTimeNS: sec*1e9 + nsec}
}

func typeOf(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return TypeFile
	case unix.S_IFDIR:
		return TypeDir
	case unix.S_IFLNK:
		return TypeSymlink
	case unix.S_IFIFO:
		return TypeFIFO
	case unix.S_IFSOCK:
		return TypeSocket
	case unix.S_IFCHR, unix.S_IFBLK:
		return TypeDevice
	}
	return TypeOther
}

func readlinkAt(dir int, name string) string {
	buf := make([]byte, MaxPath)
	n, err := unix.Readlinkat(dir, name, buf)
	if err != nil || n < 0 {
		return ""
	}
	return string(buf[:n])
}

// notRegular is the fault for name in dir when it is not what was asked:
// its type, or not_found if it went away.
func notRegular(dir int, name string, err error) Reply {
	var st unix.Stat_t
	if serr := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); serr == nil {
		if k := typeOf(uint32(st.Mode)); k == TypeSymlink || errors.Is(err, unix.ENOTDIR) {
			return fail(CodeNotRegular, 0, k)
		}
	}
	return faultOf(err)
}

// notRegularOpen is the fault for a read's failed open of name in dir:
// when something is there and it is not a regular file (a socket: ENXIO;
// a device without its driver: ENODEV or ENXIO; a final link: ELOOP; a
// directory: EISDIR; one the sandbox may not open: EACCES), the read
// fails as not_regular_file with its type, whatever the open's errno;
// otherwise as the errno says.
func notRegularOpen(dir int, name string, err error) Reply {
	var st unix.Stat_t
	if serr := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); serr == nil {
		if k := typeOf(uint32(st.Mode)); k != TypeFile {
			return fail(CodeNotRegular, 0, k)
		}
	}
	return faultOf(err)
}

// stat describes t without following a final link.
func (s *server) stat(pl *place, t target, dir int) Reply {
	in, err := infoAt(dir, t.Base, pl.path(t, dir))
	if err != nil {
		return faultOf(err)
	}
	return Reply{Info: &in}
}

// read returns at most max bytes of t, a regular file, opened so that a
// FIFO, a device or a terminal cannot block it or take it over.
func (s *server) read(pl *place, t target, dir int, max int64) Reply {
	if max <= 0 || max > s.cfg.MaxReadBytes {
		max = s.cfg.MaxReadBytes
	}
	fd, err := unix.Openat(dir, t.Base, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return notRegularOpen(dir, t.Base, err)
	}
	f := os.NewFile(uintptr(fd), "file")
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return faultOf(err)
	}
	in := infoOf(&st, pl.path(t, dir))
	if in.Type != TypeFile {
		return fail(CodeNotRegular, 0, in.Type)
	}
	data := make([]byte, 0, min(max, in.Size+1, 1<<20))
	for int64(len(data)) < max {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		chunk := data[len(data):min(int64(cap(data)), max)]
		n, err := unix.Read(fd, chunk)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return faultOf(err)
		}
		if n <= 0 {
			break
		}
		data = data[:len(data)+n]
	}
	return Reply{Info: &in, Data: data}
}

// write replaces t by a new file holding data: made beside it under a
// random name, synced, then renamed over the name, so that whatever was
// at the name (a hard link, a link, a FIFO) is replaced and never written
// through.
func (s *server) write(pl *place, t target, dir int, data []byte, mode uint32) Reply {
	if !pl.Writable {
		return fail(CodeRefused, unix.EROFS, "")
	}
	if t.Base == "." {
		return fail(CodeNotRegular, 0, TypeDir)
	}
	if int64(len(data)) > s.cfg.MaxFileBytes {
		return fail(CodeTooLarge, 0, "")
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := ".wr-" + hex.EncodeToString(rnd[:]) + ".tmp"
	fd, err := unix.Openat(dir, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return faultOf(err)
	}
	f := os.NewFile(uintptr(fd), tmp)
	defer f.Close()
	done := false
	defer func() {
		if !done {
			unix.Unlinkat(dir, tmp, 0)
		}
	}()
	if err := unix.Fchmod(fd, mode&0o777); err != nil {
		return faultOf(err)
	}
	for rest := data; len(rest) > 0; {
		n, err := unix.Write(fd, rest)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return faultOf(err)
		}
		rest = rest[n:]
	}
	if err := unix.Fsync(fd); err != nil {
		return faultOf(err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return faultOf(err)
	}
	if err := unix.Renameat(dir, tmp, dir, t.Base); err != nil {
		return faultOf(err)
	}
	done = true
	in := infoOf(&st, pl.path(t, dir))
	return Reply{Info: &in}
}

// list returns t's entries, sorted by name, at most MaxEntries of them
// and within ListBudget; Truncated says some were left out.
func (s *server) list(pl *place, t target, dir int) Reply {
	fd, err := unix.Openat(dir, t.Base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			return notRegular(dir, t.Base, err)
		}
		return faultOf(err)
	}
	f := os.NewFile(uintptr(fd), "dir")
	defer f.Close()
	names, err := f.Readdirnames(s.cfg.MaxEntries + 1)
	if err != nil && len(names) == 0 && !isEOF(err) {
		return faultOf(err)
	}
	truncated := len(names) > s.cfg.MaxEntries
	sort.Strings(names)
	if truncated {
		names = names[:s.cfg.MaxEntries]
	}
	base := pl.path(t, dir)
	entries := []Info{}
	used := 0
	for _, n := range names {
		in, err := infoAt(fd, n, joinPath(base, n))
		if err != nil {
			continue // gone since the listing
		}
		if used += entrySize(in); used > ListBudget {
			truncated = true
			break
		}
		entries = append(entries, in)
	}
	return Reply{Entries: entries, Truncated: truncated}
}

func joinPath(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

func isEOF(err error) bool { return errors.Is(err, io.EOF) }
