//go:build linux

package escape_test

// GPU probes: the GPU device nodes are closed unless SecurityConfig.AllowGPU
// opens them. test.sh, run as root, creates fake nodes (character devices
// 1:3, the null device, mode 0666) at the paths the NVIDIA and DRM drivers
// use, so the probe needs no GPU.

import (
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

var gpuNodes = []string{"/dev/nvidia0", "/dev/nvidiactl", "/dev/dri/renderD128"}

// gpuOpenProbe tries each node read-only, write-only and read-write and
// prints OPENED-<mode> <path> for each open that succeeded.
const gpuOpenProbe = `
import os, sys
for p in sys.argv[1:]:
    for name, flags in (("ro", os.O_RDONLY), ("wo", os.O_WRONLY), ("rw", os.O_RDWR)):
        try:
            os.close(os.open(p, flags))
            print("OPENED-%s %s" % (name, p))
        except OSError as e:
            print("DENIED-%s %s errno=%d" % (name, p, e.errno))
`

// needGPUNodes skips, loudly, when test.sh has not created the fake GPU
// nodes, and checks the host can open them (the control).
func needGPUNodes(t *testing.T) {
	t.Helper()
	needFakeNodes(t, gpuNodes) // devices_linux_test.go
}

// Without AllowGPU no GPU node can be opened, at any level; with it, each
// opens read-write. Control: the host opens them (needGPUNodes).
func TestGPUDevices(t *testing.T) {
	t.Parallel()
	need(t, "python3")
	needGPUNodes(t)
	argv := append([]string{"python3", "-c", gpuOpenProbe}, gpuNodes...)
	if h := onHost(t, append([]string{"/usr/bin/python3"}, argv[1:]...)...); strings.Count(h.Stdout, "OPENED-rw") != len(gpuNodes) {
		t.Fatalf("control: the probe does not open the nodes on the host: %s", h)
	}
	gpu := func(level moat.Isolation, allow bool) moat.Config {
		return levelConfig(level, func(s *moat.SecurityConfig) { s.AllowGPU = allow })
	}
	cases := []struct {
		name  string
		cfg   moat.Config
		allow bool
	}{
		{"strict", moat.Config{}, false},
		{"default", levelConfig(moat.IsolationDefault, nil), false},
		{"permissive", levelConfig(moat.IsolationPermissive, nil), false},
		{"permissive explicit AllowGPU=false", gpu(moat.IsolationPermissive, false), false},
		{"strict AllowGPU", gpu(moat.IsolationStrict, true), true},
		{"default AllowGPU", gpu(moat.IsolationDefault, true), true},
		{"permissive AllowGPU", gpu(moat.IsolationPermissive, true), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := inSandbox(t, newSandbox(t, c.cfg), argv...)
			if !strings.Contains(r.Stdout, "DENIED-") && !strings.Contains(r.Stdout, "OPENED-") {
				t.Fatalf("the probe did not run: %s", r)
			}
			for _, n := range gpuNodes {
				if c.allow {
					if !strings.Contains(r.Stdout, "OPENED-rw "+n+"\n") {
						t.Errorf("with AllowGPU, %s does not open read-write: %s", n, r)
					}
					continue
				}
				for _, mode := range []string{"ro", "wo", "rw"} {
					if strings.Contains(r.Stdout, "OPENED-"+mode+" "+n+"\n") {
						t.Errorf("without AllowGPU, %s opened (%s): %s", n, mode, r)
					}
				}
			}
		})
	}
}
