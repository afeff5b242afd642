package linux

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// sharedTempDirs are the host's shared temporary directories.
var sharedTempDirs = []string{"/tmp", "/var/tmp"}

// tempFileLimit bounds how many of each shared temporary directory's
// files a sandbox sees: each is one bind mount.
const tempFileLimit = 256

// sharedTempEntries lists the files of the host's shared temporary
// directories that a sandbox may read (at the default and permissive
// levels): regular files only, directly in /tmp or /var/tmp, that anyone
// may read. Never a directory, however empty: any directory the sandbox
// can see live can grow a Unix socket later (tmux, an SSH or GPG agent,
// X11), and neither a read-only mount nor Landlock stops connect() on one;
// that also leaves out other sandboxes' working directories, whatever
// their names. Never a symbolic link (anyone can plant one, and a rule on
// it lands on what it points to), a socket, a FIFO or a device. Files
// that only their owner may read (Kerberos ticket caches, X authority
// files, mkstemp's files) are left out too: that mode is how a user says
// "mine". Files created later are not seen.
func sharedTempEntries(skip []string) []string {
	var out []string
	for _, dir := range sharedTempDirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		n := 0
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), "moat-") || slices.Contains(skip, p) {
				continue
			}
			fi, err := e.Info() // lstat: a link never passes
			if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o004 == 0 {
				continue
			}
			if n == tempFileLimit {
				break
			}
			n++
			out = append(out, p)
		}
	}
	return out
}

// tempKeep is what the host's shared temporary directories keep of the
// permissive level's rights on the whole tree: reading. Nothing the
// sandbox does writes the host's shared temp; it writes its own.
const tempKeep = fsRead

// grantCovers reports whether a grant is dir or lies above it, so that
// the host's dir is what the sandbox sees there, as granted.
func (p *Policy) grantCovers(dir string) bool {
	for _, g := range p.Grants {
		if isUnder(dir, g.Path) {
			return true
		}
	}
	return false
}

// applyPrivate adds the sandbox's private temporary directories and home.
// With a mount namespace, /tmp and /var/tmp are its own host directories,
// bound writable and noexec (unless a grant shows the host's there);
// without one, the private temp is writable at its host path, which
// TMPDIR names. The home is writable at its own path either way.
func (e *Engine) applyPrivate(s *helperSpec) {
	p := e.policy
	if p.PrivateHome != "" {
		s.ReadWrite = append(s.ReadWrite, p.PrivateHome)
	}
	for _, t := range []struct{ dir, src string }{{"/tmp", p.PrivateTmp}, {"/var/tmp", p.PrivateVarTmp}} {
		switch {
		case t.src == "":
		case e.ns.Mount && !p.grantCovers(t.dir):
			if s.PrivateTmp == nil {
				s.PrivateTmp = map[string]string{}
			}
			s.PrivateTmp[t.dir] = t.src
			s.ReadWrite = append(s.ReadWrite, t.dir)
		case t.dir == "/tmp":
			s.ReadWrite = append(s.ReadWrite, t.src)
		}
	}
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
