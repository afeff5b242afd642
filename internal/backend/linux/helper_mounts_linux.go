package linux

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/moat-sandbox/moat/internal/hostview"
	"golang.org/x/sys/unix"
)

// hostDevices are bound from the host into the sandbox's minimal /dev.
var hostDevices = []string{"null", "zero", "full", "random", "urandom", "tty"}

// emptyDirs exist in every sandbox root, empty and read-only: programs
// expect them, and nothing the host keeps there (agent sockets in /tmp, the
// session bus in /run) is visible.
var emptyDirs = []string{"/tmp", "/var/tmp", "/run", "/proc", "/dev", "/sys"}

// bindKind says how a path is bound into the sandbox's root.
type bindKind int

const (
	bindReadOnly  bindKind = iota // read-only, no suid
	bindWritable                  // writable, no exec, suid or devices
	bindWriteExec                 // writable and executable (an explicit WRITE|EXEC grant), no suid or devices
)

// bind is one host path made visible in the sandbox.
type bind struct {
	path string
	kind bindKind
	fd   int  // O_PATH of the host object, opened before anything is mounted
	dir  bool // a directory, else a file
	link string
	// optional marks a path the policy does not require (a system path,
	// an entry of shared temp): if it vanishes while the sandbox is being
	// built, it is left out rather than failing the sandbox.
	optional bool
	// src is the host path bound, when it is not path itself (a private
	// temporary directory bound at /tmp).
	src string
	// inPrivate marks a path inside a private temporary directory, which
	// the sandbox writes: its mount point is made without following
	// anything the sandbox left there (helper_privatemount_linux.go).
	inPrivate bool
	// noExec binds it noexec whatever its kind: a file of the host's
	// shared temp, which nothing may run (anyone could have put it there).
	noExec bool
}

// setupMounts builds the sandbox's filesystem in its new mount namespace
// and switches to it. The root is a fresh tmpfs that holds only what the
// policy allows: the system paths, /etc, a few /sys files, the working
// directory and the grants, each bound from the host, plus a minimal /dev
// and empty /tmp, /var/tmp and /run. Anything else, a Unix socket in the
// home directory included, does not exist for the sandbox. The sandbox's
// init mounts /proc from inside the sandbox's PID namespace: beforePivot,
// called once the new root is ready but not yet the root, has it do that
// while the host's /proc is still visible, as the kernel requires.
func setupMounts(s *helperSpec, beforePivot func() error) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	devFDs, err := openAll(devPaths())
	if err != nil {
		return err
	}
	defer closeAll(devFDs)
	binds, err := openBinds(s)
	if err != nil {
		return err
	}
	defer closeBinds(binds)
	// After the binds are open: its tmpfs covers stagingRoot.
	vsrc, vbinds, overlays, err := openVirtual(s, binds) // helper_fspolicy_linux.go
	if err != nil {
		return err
	}
	defer vsrc.close()

	// The new root is mounted on stagingRoot while it is built; every
	// source is already open, so what that hides does not matter.
	const root = stagingRoot
	if err := unix.Mount("tmpfs", root, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
		return fmt.Errorf("mount the new root: %w", err)
	}
	for _, d := range emptyDirs {
		if err := os.MkdirAll(root+d, 0o755); err != nil {
			return err
		}
	}
	if err := buildDev(root+"/dev", devFDs, s.MemoryBytes); err != nil {
		return fmt.Errorf("/dev: %w", err)
	}
	// Binds and masks in path order, parents first, so that a mask lands
	// on what a bind brought in and a bind inside a mask shows through it.
	masks, err := placeAll(root, append(binds[:len(binds):len(binds)], vbinds...), s.MaskFiles, s.DenyMasks, vsrc.emptyFD())
	if err != nil {
		return err
	}
	for _, b := range binds {
		if strings.HasPrefix(b.path, "/dev/") { // granted devices, inside our /dev
			if err := placeBind(root, b, nil); err != nil {
				return err
			}
		}
	}
	for _, m := range masks {
		if err := remount(m, unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC); err != nil {
			if _, serr := os.Lstat(m); serr != nil {
				continue // removed on the host meanwhile: nothing left to hide
			}
			return err
		}
	}
	if s.NS.Net {
		if err := placeResolvConf(root); err != nil { // the DNS stub's (dnsstub_linux.go)
			return err
		}
	}
	// Last, so that each overlay binds its directory's finished view.
	if err := placeOverlays(s, root, overlays); err != nil { // helper_virtualdir_linux.go
		return err
	}
	if err := beforePivot(); err != nil {
		return err
	}
	return pivotInto(root)
}

// stagingRoot is where the sandbox's root is built before it becomes "/".
const stagingRoot = "/tmp"

// openBinds opens every path the sandbox may see, before anything is
// mounted over it, in path order (parents first). A path listed under
// several kinds gets the most permissive one, as Landlock unions rules.
// Paths that do not exist are left out, except the working directory and
// the grants, which the caller checked.
func openBinds(s *helperSpec) ([]bind, error) {
	kinds := []struct {
		paths []string
		kind  bindKind
		must  bool
	}{
		{s.ReadExec, bindReadOnly, false},
		{s.ReadOnly, bindReadOnly, false},
		{s.TempRead, bindReadOnly, false}, // opened without following links, like everything here
		{s.DevFiles, bindReadOnly, false}, // devices still open for writing
		{[]string{s.WorkDir}, bindWritable, true},
		{s.ReadWrite, bindWritable, false},
		{s.WriteExec, bindWriteExec, false},
	}
	if s.Permissive {
		kinds = append(kinds,
			struct {
				paths []string
				kind  bindKind
				must  bool
			}{hostTopLevel(), bindWriteExec, false},
			struct {
				paths []string
				kind  bindKind
				must  bool
			}{hostview.SharedTempDirs, bindWritable, false})
	}
	want := map[string]bindKind{}
	must := map[string]bool{}
	for _, k := range kinds {
		for _, p := range k.paths {
			if p == "/proc" || p == "/dev" || isSandboxDev(p) {
				continue
			}
			if old, ok := want[p]; !ok || k.kind > old {
				want[p] = k.kind
			}
			must[p] = must[p] || k.must
		}
	}
	// A pin takes the kind of the nearest bind above it.
	for _, p := range s.ControlPins {
		if _, ok := want[p]; ok {
			continue
		}
		best := ""
		for q := range want {
			if isStrictlyUnder(p, q) && len(q) > len(best) {
				best = q
			}
		}
		if best != "" {
			want[p] = want[best]
		}
	}
	// A private temporary directory must be there: without it the
	// sandbox would get the empty read-only one.
	for p := range s.PrivateTmp {
		if _, ok := want[p]; ok {
			must[p] = true
		}
	}
	// Control paths are bound read-only over the writable places that
	// hold them, whatever else lists them.
	for _, p := range s.ControlRO {
		want[p] = bindReadOnly
		must[p] = true
	}
	paths := make([]string, 0, len(want))
	for p := range want {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var out []bind
	for _, p := range paths {
		b := bind{path: p, kind: want[p], fd: -1, optional: !must[p] && s.Identity[p] == (fileID{})}
		b.src, b.inPrivate = privateSource(s, p)
		b.noExec = want[p] == bindReadOnly && slices.Contains(s.TempRead, p)
		src := p
		if b.src != "" {
			src = b.src
		}
		var id *fileID
		if v, ok := s.Identity[p]; ok {
			id = &v
		}
		fi, err := os.Lstat(src)
		if err != nil {
			if must[p] || id != nil || !os.IsNotExist(err) {
				closeBinds(out)
				return nil, fmt.Errorf("%q: %w", p, err)
			}
			continue
		}
		if fi.Mode()&os.ModeSymlink != 0 && id != nil {
			closeBinds(out)
			return nil, &redirectedError{p, "it is a symbolic link"}
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			// A system path like /bin -> usr/bin on merged-/usr systems.
			if b.link, err = os.Readlink(p); err != nil {
				closeBinds(out)
				return nil, err
			}
			out = append(out, b)
			continue
		}
		fd, err := openVerified(src, id)
		if err != nil && b.optional && (errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ELOOP)) {
			continue // gone, or swapped for a link, since it was listed
		}
		if err != nil {
			closeBinds(out)
			return nil, fmt.Errorf("open %q: %w", p, err)
		}
		b.fd, b.dir = fd, fi.IsDir()
		out = append(out, b)
	}
	return out, nil
}

func closeBinds(binds []bind) {
	for _, b := range binds {
		if b.fd >= 0 {
			unix.Close(b.fd)
		}
	}
}

// isSandboxDev reports the device paths the sandbox's own /dev provides.
func isSandboxDev(p string) bool {
	switch p {
	case "/dev/shm", "/dev/pts", "/dev/ptmx":
		return true
	}
	for _, d := range hostDevices {
		if p == "/dev/"+d {
			return true
		}
	}
	return false
}

// placeBind creates b's mount point under root and binds the host object
// there with the flags its kind calls for. pt makes the mount points
// inside private temporary directories; nil makes a tree for this bind.
func placeBind(root string, b bind, pt *privateTree) error {
	if b.inPrivate && b.link == "" {
		if pt == nil {
			pt = newPrivateTree(root)
			defer pt.close()
		}
		return pt.placePrivateBind(b) // helper_privatemount_linux.go
	}
	target := root + b.path
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	if b.link != "" {
		err := os.Symlink(b.link, target)
		if errors.Is(err, os.ErrExist) {
			// A bind of a directory above shows the host's link already
			// (a granted home's linked ~/.bashrc): the same link is fine.
			if l, lerr := os.Readlink(target); lerr == nil && l == b.link {
				return nil
			}
		}
		return err
	}
	if err := makeMountPoint(target, b.dir); err != nil {
		return err
	}
	// The new root is being built on stagingRoot: a recursive bind of a
	// directory above it would copy the new root into itself.
	rec := !isUnder(stagingRoot, b.path)
	if newMountAPI.Load() {
		mp, err := unix.Open(target, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		if err != nil {
			return fmt.Errorf("mount point %q: %w", b.path, err)
		}
		err = attachClone(b.fd, rec, bindFlags(b.kind), mp) // helper_attach_linux.go
		unix.Close(mp)
		switch {
		case err == nil:
			return nil
		case b.optional && errors.Is(err, unix.ENOENT):
			return nil // removed on the host since it was opened: nothing to show
		case !errors.Is(err, errOldKernel):
			return fmt.Errorf("bind onto %q: %w", b.path, err)
		}
	}
	var recFlag uintptr
	if rec {
		recFlag = unix.MS_REC
	}
	if err := bindFD(b.fd, target, recFlag); err != nil {
		if b.optional && errors.Is(err, unix.ENOENT) {
			return nil // removed on the host since it was opened: nothing to show
		}
		return err
	}
	return remount(target, bindFlags(b.kind))
}

// bindFlags are the mount flags of a bind of kind k.
func bindFlags(k bindKind) uintptr {
	flags := uintptr(unix.MS_NOSUID)
	switch k {
	case bindReadOnly:
		flags |= unix.MS_RDONLY
	case bindWritable:
		// noexec closes what Landlock cannot: mmap(PROT_EXEC) of a
		// written file, and the dynamic loader run on a written binary.
		flags |= unix.MS_NOEXEC | unix.MS_NODEV
	case bindWriteExec:
		flags |= unix.MS_NODEV
	}
	return flags
}

// remount changes the flags of the bind mount at path, keeping the flags a
// remount in a user namespace may not drop.
func remount(path string, flags uintptr) error {
	var sfs unix.Statfs_t
	if err := unix.Statfs(path, &sfs); err != nil {
		return fmt.Errorf("statfs %q: %w", path, err)
	}
	flags |= unix.MS_BIND | unix.MS_REMOUNT | lockedFlags(sfs.Flags)
	if err := unix.Mount("", path, "", flags, ""); err != nil {
		return fmt.Errorf("remount %q: %w", path, err)
	}
	return nil
}

// pivotInto makes root the root of the mount namespace, drops the old one,
// and makes the new root itself read-only.
func pivotInto(root string) error {
	if err := unix.Chdir(root); err != nil {
		return err
	}
	// pivot_root(".", ".") stacks the old root on the new one; unmounting
	// "." then removes the old root, with no directory needed to hold it.
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach the old root: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return err
	}
	if err := unix.Mount("", "/", "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
		return fmt.Errorf("make the root read-only: %w", err)
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

// maxPtys bounds the sandbox's ptys: each holds tty buffers (about 25 KiB
// of kernel memory that no sum counts) and one of the host-wide
// kernel.pty.max. A terminal, a test suite's pseudo-terminals and an
// expect script need a few.
const maxPtys = 256

// devptsOptions are the sandbox's devpts instance's options.
var devptsOptions = "newinstance,ptmxmode=0666,mode=0620,max=" + strconv.Itoa(maxPtys)

// buildDev makes dev a tmpfs holding only the harmless devices, a private
// devpts instance and a private /dev/shm (of at most shmBytes, when set).
func buildDev(dev string, devFDs map[string]int, shmBytes int64) error {
	if err := unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=1m"); err != nil {
		return fmt.Errorf("mount tmpfs: %w", err)
	}
	for path, fd := range devFDs {
		target := dev + strings.TrimPrefix(path, "/dev")
		if err := os.WriteFile(target, nil, 0o666); err != nil {
			return err
		}
		if err := bindFD(fd, target, 0); err != nil {
			return err
		}
	}
	for _, d := range []string{"/pts", "/shm"} {
		if err := os.Mkdir(dev+d, 0o755); err != nil {
			return err
		}
	}
	if err := unix.Mount("devpts", dev+"/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, devptsOptions); err != nil {
		return fmt.Errorf("mount devpts: %w", err)
	}
	shmOpts := "mode=1777"
	if shmBytes > 0 {
		// Files in /dev/shm are memory that no process's RSS shows.
		// Each inode is kernel memory too (about 1 KiB of slab): a
		// million empty files would pin a gigabyte no sum counts.
		shmOpts += fmt.Sprintf(",size=%d,nr_inodes=%d", shmBytes, max(shmBytes/(16<<10), 1024))
	}
	if err := mountTmpfs(dev+"/shm", shmOpts); err != nil {
		return err
	}
	links := map[string]string{
		"/ptmx": "pts/ptmx", "/fd": "/proc/self/fd",
		"/stdin": "/proc/self/fd/0", "/stdout": "/proc/self/fd/1", "/stderr": "/proc/self/fd/2",
	}
	for name, target := range links {
		if err := os.Symlink(target, dev+name); err != nil {
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

// lockedFlags carries over the flags a remount in a user namespace must keep.
func lockedFlags(st int64) uintptr {
	var f uintptr
	pairs := []struct {
		st int64
		ms uintptr
	}{
		{unix.ST_RDONLY, unix.MS_RDONLY},
		{unix.ST_NOSUID, unix.MS_NOSUID},
		{unix.ST_NODEV, unix.MS_NODEV},
		{unix.ST_NOEXEC, unix.MS_NOEXEC},
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

// placeAll places binds (except devices) and masks in path order. A mask
// hides what exists at its path: a directory behind an empty tmpfs, a file
// behind /dev/null. It returns the tmpfs masks, which the caller makes
// read-only once everything that shows through them is in place.
func placeAll(root string, binds []bind, maskPaths []string, denyMasks []denyMask, deniedFile int) ([]string, error) {
	type item struct {
		path   string
		bind   *bind
		mode   string // of a directory mask
		denied bool
	}
	var items []item
	for i := range binds {
		if !strings.HasPrefix(binds[i].path, "/dev/") {
			items = append(items, item{path: binds[i].path, bind: &binds[i]})
		}
	}
	for _, m := range maskPaths {
		items = append(items, item{path: m, mode: "0755"})
	}
	for _, m := range denyMasks {
		// Denied: no permission to list (EACCES), only to pass through
		// to a grant inside.
		mode := "0000"
		if m.Traverse {
			mode = "0111"
		}
		items = append(items, item{path: m.Path, mode: mode, denied: true})
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].path < items[j].path })
	pt := newPrivateTree(root)
	defer pt.close()
	var dirs []string
	final := map[string]string{} // denied directories' masks, their modes
	for _, it := range items {
		if it.bind != nil {
			if err := placeBind(root, *it.bind, pt); err != nil {
				return nil, err
			}
			continue
		}
		target := root + it.path
		fi, err := os.Lstat(target)
		if err != nil {
			continue
		}
		switch {
		case fi.IsDir():
			mode := it.mode
			if it.denied {
				// Mount points inside are made first; the zygote has no
				// CAP_DAC_OVERRIDE. The mode is set once they exist.
				mode = "0700"
				final[target] = it.mode
			}
			if err = mountTmpfs(target, "mode="+mode+",size=64k"); err == nil {
				dirs = append(dirs, target)
			}
		case fi.Mode().IsRegular() && it.denied && deniedFile >= 0:
			if err = bindFD(deniedFile, target, 0); err == nil {
				err = remount(target, unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC)
			}
		case fi.Mode().IsRegular():
			if err = unix.Mount(root+"/dev/null", target, "", unix.MS_BIND, ""); err != nil {
				err = fmt.Errorf("mask %q: %w", it.path, err)
			}
		}
		if err != nil && !errors.Is(err, unix.ENOENT) { // ENOENT: removed meanwhile, nothing to hide
			return nil, err
		}
	}
	if err := pt.sealParents(binds); err != nil { // helper_privatemount_linux.go
		return nil, err
	}
	if err := chmodMasks(final); err != nil { // helper_fspolicy_linux.go
		return nil, err
	}
	return dirs, nil
}

// makeMountPoint makes sure something exists at target to mount on. It
// never opens an existing file for writing: target may already be a host
// file seen through a writable bind (a repository's .git/config), which
// must be left as it is.
func makeMountPoint(target string, dir bool) error {
	if _, err := os.Lstat(target); err == nil {
		return nil
	}
	if dir {
		return os.MkdirAll(target, 0o755)
	}
	fd, err := unix.Open(target, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return fmt.Errorf("mount point %q: %w", target, err)
	}
	return unix.Close(fd)
}
