package linux

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// sharedTempDirs are the host's shared temporary directories.
var sharedTempDirs = []string{"/tmp", "/var/tmp"}

// Limits of the scan that decides which entries of shared temp a sandbox at
// the default level may read.
const (
	tempScanDepth   = 4
	tempScanEntries = 2000
)

// sharedTempEntries lists the entries of the shared temporary directories
// that the default level lets a sandbox read. Symbolic links are left out. Read-only mounts and Landlock
// both let a process connect to a Unix socket it can reach by path, so an
// entry that is a socket, or a directory holding one (an SSH or GPG agent,
// tmux, X11), is left out, as is one too large to scan, and so are other
// sandboxes' working directories. Entries that appear later are not
// readable.
func sharedTempEntries(skip []string) []string {
	var out []string
	for _, dir := range sharedTempDirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			if strings.HasPrefix(e.Name(), "moat-") || slices.Contains(skip, p) {
				continue
			}
			if e.Type()&fs.ModeSymlink != 0 {
				// Anyone can plant a link in shared temp: a rule on it
				// would land on what it points to (your ~/.ssh, say).
				continue
			}
			budget := tempScanEntries
			if holdsSocket(p, e.Type(), tempScanDepth, &budget) {
				continue
			}
			out = append(out, p)
		}
	}
	return out
}

// holdsSocket reports whether p is a socket or a directory with one within
// depth levels, or could not be scanned within budget entries.
func holdsSocket(p string, mode fs.FileMode, depth int, budget *int) bool {
	switch {
	case mode&fs.ModeSocket != 0:
		return true
	case !mode.IsDir():
		return false
	case depth == 0:
		return true
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		return true // unreadable here; the sandbox could not read it either
	}
	*budget -= len(entries)
	if *budget < 0 {
		return true
	}
	for _, e := range entries {
		if holdsSocket(filepath.Join(p, e.Name()), e.Type(), depth-1, budget) {
			return true
		}
	}
	return false
}

// permissiveSkip are host top-level directories that a permissive sandbox
// gets its own of: /proc, /dev and /sys are built for it, /run (session
// buses, agent sockets, the container runtime's socket) stays empty, and
// /tmp is bound on its own, not executable.
var permissiveSkip = map[string]bool{"proc": true, "dev": true, "sys": true, "run": true, "tmp": true, "lost+found": true}

// hostTopLevel lists the host's top-level entries a permissive sandbox
// binds, writable and executable.
func hostTopLevel() []string {
	entries, err := os.ReadDir("/")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if !permissiveSkip[e.Name()] {
			out = append(out, "/"+e.Name())
		}
	}
	return out
}

// gpuDevices are the GPU device nodes AllowGPU opens, as globs.
var gpuDevices = []string{"/dev/nvidia*", "/dev/nvidia-caps", "/dev/dri", "/dev/kfd"}

// gpuDriverFiles are what GPU drivers and runtimes (CUDA, ROCm, Mesa) read
// besides the device nodes.
var gpuDriverFiles = []string{
	"/proc/driver/nvidia", "/sys/bus/pci", "/sys/class/drm", "/sys/class/kfd",
	"/sys/devices/virtual/kfd", "/sys/module/nvidia", "/sys/module/amdgpu",
	"/sys/devices", "/usr/share/nvidia",
}

// gpuPaths lists the GPU device nodes present on this host.
func gpuPaths() []string {
	var out []string
	for _, g := range gpuDevices {
		matches, _ := filepath.Glob(g)
		out = append(out, matches...)
	}
	return out
}

// carveAll is every Landlock filesystem right, to carve with.
const carveAll = ^uint64(0)

// noExec keeps every right except executing.
const noExec = carveAll &^ unix.LANDLOCK_ACCESS_FS_EXECUTE
