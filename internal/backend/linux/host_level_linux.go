package linux

import (
	"os"
	"path/filepath"

	"github.com/moat-sandbox/moat/internal/spec"
	"golang.org/x/sys/unix"
)

// tempKeep is what the host's shared temporary directories keep of the
// permissive level's rights on the whole tree: reading. Nothing the
// sandbox does writes the host's shared temp; it writes its own.
const tempKeep = fsRead

// grantCovers reports whether a grant is dir or lies above it, so that
// the host's dir is what the sandbox sees there, as granted.
func grantCovers(p *spec.Policy, dir string) bool {
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
	if p.Private.Home != "" {
		s.ReadWrite = append(s.ReadWrite, p.Private.Home)
	}
	for _, t := range []struct{ dir, src string }{{"/tmp", p.Private.Tmp}, {"/var/tmp", p.Private.VarTmp}} {
		switch {
		case t.src == "":
		case e.ns.Mount && !grantCovers(&p, t.dir):
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
