package linux

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// hostDevices are bound from the host into the sandbox's minimal /dev.
var hostDevices = []string{"null", "zero", "full", "random", "urandom", "tty"}

// tempMasks are shared directories replaced by an empty private tmpfs, so
// the sandbox neither sees nor reaches what other processes put there
// (agent sockets in /tmp, the session bus in /run).
var tempMasks = []string{"/tmp", "/var/tmp", "/run"}

// keptPath is a path that lies under a mask or /dev and must stay visible:
// it is opened before masking and bound back afterwards.
type keptPath struct {
	path string
	fd   int
	dir  bool
}

// setupMounts builds the sandbox's view of the filesystem in its new mount
// namespace: a minimal /dev, private temporary directories, and the working
// directory and writable grants bound again without exec, suid or device
// rights. The sandbox's init mounts /proc afterwards, from inside the
// sandbox's PID namespace.
func setupMounts(s *helperSpec) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	devFDs, err := openAll(devPaths())
	if err != nil {
		return err
	}
	defer closeAll(devFDs)

	masks := existingDirs(tempMasks)
	kept, err := openKept(keepCandidates(s), append(masks, "/dev"))
	if err != nil {
		return err
	}
	defer func() {
		for _, k := range kept {
			unix.Close(k.fd)
		}
	}()

	if err := buildDev(devFDs); err != nil {
		return fmt.Errorf("/dev: %w", err)
	}
	for _, m := range masks {
		if err := mountTmpfs(m, "mode=0755"); err != nil {
			return err
		}
	}
	for _, k := range kept {
		if err := bindKept(k); err != nil {
			return err
		}
	}
	if err := maskFiles(s.MaskFiles); err != nil {
		return err
	}
	if s.NoexecMounts {
		for _, p := range append([]string{s.WorkDir}, s.ReadWrite...) {
			if err := bindNoexec(p); err != nil {
				return err
			}
		}
	}
	return nil
}

func devPaths() []string {
	out := make([]string, len(hostDevices))
	for i, d := range hostDevices {
		out[i] = "/dev/" + d
	}
	return out
}

func existingDirs(paths []string) []string {
	var out []string
	for _, p := range paths {
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
			out = append(out, p)
		}
	}
	return out
}

// keepCandidates are the paths the command must still see after masking.
func keepCandidates(s *helperSpec) []string {
	out := []string{s.WorkDir}
	out = append(out, s.ReadWrite...)
	out = append(out, s.WriteExec...)
	return out
}

// openKept opens every candidate that lies under one of the masked roots.
func openKept(candidates, roots []string) ([]keptPath, error) {
	var kept []keptPath
	for _, p := range candidates {
		if !underAny(p, roots) {
			continue
		}
		fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("open %q: %w", p, err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("stat %q: %w", p, err)
		}
		kept = append(kept, keptPath{path: p, fd: fd, dir: st.Mode&unix.S_IFMT == unix.S_IFDIR})
	}
	return kept, nil
}

func underAny(p string, roots []string) bool {
	for _, r := range roots {
		if p == r || strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return false
}

func openAll(paths []string) (map[string]int, error) {
	fds := make(map[string]int, len(paths))
	for _, p := range paths {
		fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			if err == unix.ENOENT || err == unix.ENXIO {
				continue
			}
			closeAll(fds)
			return nil, fmt.Errorf("open %q: %w", p, err)
		}
		fds[p] = fd
	}
	return fds, nil
}

func closeAll(fds map[string]int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

func mountTmpfs(path, opts string) error {
	if err := unix.Mount("tmpfs", path, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, opts); err != nil {
		return fmt.Errorf("mount tmpfs on %q: %w", path, err)
	}
	return nil
}

// buildDev replaces /dev with a tmpfs holding only the harmless devices, a
// private devpts instance and a private /dev/shm.
func buildDev(devFDs map[string]int) error {
	if err := unix.Mount("tmpfs", "/dev", "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=1m"); err != nil {
		return fmt.Errorf("mount tmpfs: %w", err)
	}
	for path, fd := range devFDs {
		if err := os.WriteFile(path, nil, 0o666); err != nil {
			return err
		}
		if err := bindFD(fd, path, 0); err != nil {
			return err
		}
	}
	for _, d := range []string{"/dev/pts", "/dev/shm"} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	if err := unix.Mount("devpts", "/dev/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return fmt.Errorf("mount devpts: %w", err)
	}
	if err := mountTmpfs("/dev/shm", "mode=1777"); err != nil {
		return err
	}
	links := map[string]string{
		"/dev/ptmx": "pts/ptmx", "/dev/fd": "/proc/self/fd",
		"/dev/stdin": "/proc/self/fd/0", "/dev/stdout": "/proc/self/fd/1", "/dev/stderr": "/proc/self/fd/2",
	}
	for name, target := range links {
		if err := os.Symlink(target, name); err != nil {
			return err
		}
	}
	return nil
}

// bindFD bind-mounts the object open as fd onto path.
func bindFD(fd int, path string, flags uintptr) error {
	src := "/proc/self/fd/" + strconv.Itoa(fd)
	if err := unix.Mount(src, path, "", unix.MS_BIND|flags, ""); err != nil {
		return fmt.Errorf("bind onto %q: %w", path, err)
	}
	return nil
}

// bindKept recreates a kept path inside its mask and binds the original back.
func bindKept(k keptPath) error {
	if err := os.MkdirAll(filepath.Dir(k.path), 0o755); err != nil {
		return err
	}
	if k.dir {
		if err := os.MkdirAll(k.path, 0o755); err != nil {
			return err
		}
	} else if err := os.WriteFile(k.path, nil, 0o644); err != nil {
		return err
	}
	return bindFD(k.fd, k.path, unix.MS_REC)
}

// bindNoexec makes path a mount of its own with exec, suid and device files
// disabled. That closes what Landlock cannot: mmap(PROT_EXEC) of a written
// file, and the dynamic loader run on a written binary.
func bindNoexec(path string) error {
	var sfs unix.Statfs_t
	if err := unix.Statfs(path, &sfs); err != nil {
		return fmt.Errorf("statfs %q: %w", path, err)
	}
	if err := unix.Mount(path, path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %q: %w", path, err)
	}
	flags := uintptr(unix.MS_BIND|unix.MS_REMOUNT|unix.MS_NOEXEC|unix.MS_NOSUID|unix.MS_NODEV) | lockedFlags(sfs.Flags)
	if err := unix.Mount("", path, "", flags, ""); err != nil {
		return fmt.Errorf("remount %q noexec: %w", path, err)
	}
	return nil
}

// lockedFlags carries over the flags a remount in a user namespace must keep.
func lockedFlags(st int64) uintptr {
	var f uintptr
	pairs := []struct {
		st int64
		ms uintptr
	}{
		{unix.ST_RDONLY, unix.MS_RDONLY},
		{unix.ST_NOATIME, unix.MS_NOATIME},
		{unix.ST_NODIRATIME, unix.MS_NODIRATIME},
		{unix.ST_RELATIME, unix.MS_RELATIME},
	}
	for _, p := range pairs {
		if st&p.st != 0 {
			f |= p.ms
		}
	}
	return f
}

// maskFiles hides each path: a file behind /dev/null, a directory behind an
// empty tmpfs.
func maskFiles(paths []string) error {
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		switch {
		case fi.IsDir():
			if err := mountTmpfs(p, "mode=0755,size=4k"); err != nil {
				return err
			}
		case fi.Mode().IsRegular():
			if err := unix.Mount("/dev/null", p, "", unix.MS_BIND, ""); err != nil {
				return fmt.Errorf("mask %q: %w", p, err)
			}
		}
	}
	return nil
}

// mountProc mounts a /proc that shows the helper's own PID namespace.
func mountProc() error {
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	return nil
}
