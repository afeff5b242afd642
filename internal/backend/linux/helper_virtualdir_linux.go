package linux

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"golang.org/x/sys/unix"
)

// Virtual files at paths that do not exist on the host, in a host
// directory the sandbox sees (the cwd, /etc, a grant). Making the file's
// mount point there would write to the host, so the directory itself is
// replaced in the sandbox's view: a fresh tmpfs gets, for each entry of
// the directory as the view shows it, a mount point with that entry bound
// onto it (recursively, so the masks, pins and binds below it come
// along, each bind keeping its flags) or, for a link, the same link; the
// virtual files are written into it; it is made read-only and moved over
// the directory. The host directory is never written. The price: nothing
// can be created, removed or renamed directly in that directory inside
// the sandbox (its existing entries keep their rights), as for a sealed
// directory.

// overlayStage is where an overlay directory is built in the new root,
// and removed from once moved.
const overlayStage = "/.moat-overlay"

// virtualOverlays lists the virtual files that need an overlay of their
// directory, grouped by directory, and the files bound as usual.
func virtualOverlays(s *helperSpec, missing map[string]bool) (dirs map[string][]virtualFile) {
	for _, f := range s.Virtual {
		if !missing[f.Path] {
			continue
		}
		if dirs == nil {
			dirs = map[string][]virtualFile{}
		}
		d := filepath.Dir(f.Path)
		dirs[d] = append(dirs[d], f)
	}
	return dirs
}

// placeOverlays gives each directory of dirs, under root, its overlay.
// Deeper directories go first, so that an overlay of a parent binds the
// finished overlay of its child.
// A grant of an overlaid directory is checked, when its Landlock rule is
// made, against the overlay: the bind it replaces was checked when it was
// opened, and the overlay is the helper's own.
func placeOverlays(s *helperSpec, root string, dirs map[string][]virtualFile) error {
	paths := make([]string, 0, len(dirs))
	for d := range dirs {
		paths = append(paths, d)
	}
	sort.Slice(paths, func(i, j int) bool { return len(paths[i]) > len(paths[j]) })
	for i, d := range paths {
		if err := placeOverlay(root, d, dirs[d], i); err != nil {
			return fmt.Errorf("virtual files in %q: %w", d, err)
		}
		if _, ok := s.Identity[d]; ok {
			var st unix.Stat_t
			if err := unix.Lstat(root+d, &st); err != nil {
				return fmt.Errorf("virtual files in %q: %w", d, err)
			}
			s.Identity[d] = fileID{Dev: uint64(st.Dev), Ino: st.Ino}
		}
	}
	return nil
}

func placeOverlay(root, dir string, files []virtualFile, n int) error {
	target := root + dir
	fi, err := os.Stat(target)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("not a directory")
	}
	stage := root + overlayStage + "." + strconv.Itoa(n)
	if err := os.Mkdir(stage, 0o700); err != nil {
		return err
	}
	defer os.Remove(stage)
	mode := strconv.FormatUint(uint64(fi.Mode().Perm()), 8)
	if err := unix.Mount("tmpfs", stage, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode="+mode); err != nil {
		return fmt.Errorf("mount tmpfs: %w", err)
	}
	moved := false
	defer func() {
		if !moved {
			_ = unix.Unmount(stage, unix.MNT_DETACH)
		}
	}()
	entries, err := os.ReadDir(target)
	if err != nil {
		return err
	}
	for _, e := range entries {
		src, dst := filepath.Join(target, e.Name()), filepath.Join(stage, e.Name())
		st, err := os.Lstat(src)
		if err != nil {
			return err
		}
		if st.Mode()&os.ModeSymlink != 0 {
			l, err := os.Readlink(src)
			if err != nil {
				return err
			}
			if err := os.Symlink(l, dst); err != nil {
				return err
			}
			continue
		}
		if err := makeMountPoint(dst, st.IsDir()); err != nil {
			return err
		}
		if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %q: %w", e.Name(), err)
		}
	}
	for _, f := range files {
		p := filepath.Join(stage, filepath.Base(f.Path))
		fd, err := unix.Open(p, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o444)
		if err != nil {
			return fmt.Errorf("virtual file %q: %w", f.Path, err)
		}
		_, werr := unix.Write(fd, f.Content)
		if cerr := unix.Close(fd); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return fmt.Errorf("virtual file %q: %w", f.Path, werr)
		}
	}
	if err := remount(stage, unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC); err != nil {
		return err
	}
	if err := unix.Mount(stage, target, "", unix.MS_MOVE, ""); err != nil {
		return fmt.Errorf("move the overlay: %w", err)
	}
	moved = true
	return nil
}
