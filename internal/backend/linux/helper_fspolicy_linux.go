package linux

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// Virtual files and a hidden /proc, in the zygote (see
// host_fspolicy_linux.go for the policy).
//
// A virtual file's contents are written to a tmpfs of the zygote's own
// mount namespace, mounted at stagingRoot before the new root covers it,
// and each file is bound read-only at its path like any other bind: it
// exists only in the sandbox's view and nothing is written to the host.
// Its mount point must not be made on the host either, so a virtual file
// whose path does not exist must lie where the sandbox's view is its own:
// the new root's tmpfs, a mask, or a private temporary directory. One in
// a host directory shown in the sandbox (the working directory, /etc, a
// grant) must replace an existing file.

// virtualSources holds the open sources of the virtual files, and the
// empty file without permissions that masks a denied file (not /dev/null:
// Landlock rules hold on inodes, and /dev/null's rule allows reading).
type virtualSources struct {
	fds   map[string]int
	empty int // -1 when no denied path is masked
}

func (v *virtualSources) close() {
	if v == nil {
		return
	}
	for _, fd := range v.fds {
		unix.Close(fd)
	}
	if v.empty >= 0 {
		unix.Close(v.empty)
	}
}

// emptyFD is the denied files' mask, or -1.
func (v *virtualSources) emptyFD() int {
	if v == nil {
		return -1
	}
	return v.empty
}

// openVirtualSources writes s's virtual files, and the empty mask of
// denied files, to a fresh tmpfs at stagingRoot and opens each; nil when
// there are none.
func openVirtualSources(s *helperSpec) (*virtualSources, error) {
	if len(s.Virtual) == 0 && len(s.DenyMasks) == 0 {
		return nil, nil
	}
	if err := unix.Mount("tmpfs", stagingRoot, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0700"); err != nil {
		return nil, fmt.Errorf("virtual files: mount tmpfs: %w", err)
	}
	v := &virtualSources{fds: map[string]int{}, empty: -1}
	if len(s.DenyMasks) > 0 {
		p := filepath.Join(stagingRoot, "denied")
		if err := os.WriteFile(p, nil, 0); err != nil {
			return nil, fmt.Errorf("denied paths: %w", err)
		}
		fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		if err != nil {
			return nil, fmt.Errorf("denied paths: %w", err)
		}
		v.empty = fd
	}
	for i, f := range s.Virtual {
		p := filepath.Join(stagingRoot, strconv.Itoa(i))
		if err := os.WriteFile(p, f.Content, 0o444); err != nil {
			v.close()
			return nil, fmt.Errorf("virtual file %q: %w", f.Path, err)
		}
		fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		if err != nil {
			v.close()
			return nil, fmt.Errorf("virtual file %q: %w", f.Path, err)
		}
		v.fds[f.Path] = fd
	}
	return v, nil
}

// openVirtual checks where the virtual files land, then writes and opens
// them, and returns their binds, and the directories that need an overlay
// for the files missing on the host (helper_virtualdir_linux.go).
func openVirtual(s *helperSpec, binds []bind) (*virtualSources, []bind, map[string][]virtualFile, error) {
	missing, err := checkVirtualTargets(s, binds)
	if err != nil {
		return nil, nil, nil, err
	}
	v, err := openVirtualSources(s)
	if err != nil {
		return nil, nil, nil, err
	}
	var out []bind
	for _, f := range s.Virtual {
		if missing[f.Path] {
			continue
		}
		_, inPrivate := privateSource(s, f.Path)
		out = append(out, bind{path: f.Path, kind: bindReadOnly, fd: v.fds[f.Path], inPrivate: inPrivate})
	}
	return v, out, virtualOverlays(s, missing), nil
}

// checkVirtualTargets checks where each virtual file lands in the view
// that binds and masks build: a path in a host directory shown in the
// sandbox must exist there as a file, or be missing in a directory that
// exists there, which gets an overlay; those are returned.
func checkVirtualTargets(s *helperSpec, binds []bind) (map[string]bool, error) {
	var missing map[string]bool
	// masked: a mask below the host directory covers p, so that its
	// mount point is made in the mask's tmpfs.
	masked := func(p, below string) bool {
		for _, m := range s.MaskFiles {
			if isUnder(p, m) && isStrictlyUnder(m, below) {
				return true
			}
		}
		for _, m := range s.DenyMasks {
			if isUnder(p, m.Path) && isStrictlyUnder(m.Path, below) {
				return true
			}
		}
		return false
	}
	for _, f := range s.Virtual {
		for _, special := range []string{"/proc", "/dev", "/sys"} {
			if isUnder(f.Path, special) || f.Path == "/" {
				return nil, fmt.Errorf("virtual file %q: %s is built for the sandbox; a virtual file cannot go there", f.Path, special)
			}
		}
		// The bind whose tree holds the path, the deepest.
		var host *bind
		for i := range binds {
			b := &binds[i]
			if b.dir && isUnder(f.Path, b.path) && (host == nil || len(b.path) > len(host.path)) {
				host = b
			}
		}
		// A private temporary directory (src set) is the sandbox's own.
		if host != nil && host.src == "" && !masked(f.Path, host.path) {
			hostPath := f.Path
			fi, err := os.Lstat(hostPath)
			switch {
			case os.IsNotExist(err) && f.Path != host.path && isDirNoFollow(filepath.Dir(hostPath)):
				// Shown through an overlay of its directory, never
				// made on the host.
				if missing == nil {
					missing = map[string]bool{}
				}
				missing[f.Path] = true
			case err != nil:
				return nil, fmt.Errorf("virtual file %q: %q is a host directory shown in the sandbox, and the file's directory does not exist there: making it would write to the host", f.Path, host.path)
			case fi.IsDir():
				return nil, fmt.Errorf("virtual file %q: a directory", f.Path)
			case fi.Mode()&os.ModeSymlink != 0:
				return nil, fmt.Errorf("virtual file %q: a symbolic link in the sandbox's view; name its target", f.Path)
			}
		}
	}
	return missing, nil
}

// isDirNoFollow reports whether p is a directory reached through no link
// on the way.
func isDirNoFollow(p string) bool {
	fi, err := os.Lstat(p)
	if err != nil || !fi.IsDir() {
		return false
	}
	r, err := filepath.EvalSymlinks(p)
	return err == nil && r == p
}

// hideProc gives the calling thread, which is about to fork a command, a
// mount namespace of its own without /proc, when the spec asks for it. The
// zygote keeps the sandbox's /proc for its memory watch.
func (z *zygoteProc) hideProc() error {
	if !z.spec.HideProc {
		return nil
	}
	if err := unix.Unshare(unix.CLONE_NEWNS | unix.CLONE_FS); err != nil {
		return fmt.Errorf("hide /proc: unshare: %w", err)
	}
	if err := unix.Unmount("/proc", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("hide /proc: %w", err)
	}
	return nil
}

// chmodMasks gives the denied directories' masks their modes (octal),
// once everything inside them is placed.
func chmodMasks(modes map[string]string) error {
	for target, mode := range modes {
		m, err := strconv.ParseUint(mode, 8, 32)
		if err != nil {
			return fmt.Errorf("mask %q: mode %q", target, mode)
		}
		if err := unix.Chmod(target, uint32(m)); err != nil {
			return fmt.Errorf("mask %q: %w", target, err)
		}
	}
	return nil
}
