//go:build linux

package escape_test

// Device-class probes: the NPU and hardware device nodes are closed unless
// SecurityConfig.AllowNPU or AllowHardware opens them, each class only by
// its own switch, and the devices no class opens (raw HID, input,
// uinput) stay closed under every switch. test.sh, run as root, creates
// fake nodes (character devices 1:3, the null device, mode 0666) at the
// paths the drivers use, so the probe needs no such hardware. gpuOpenProbe
// (gpu_linux_test.go) opens each.

import (
	"os"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

// The fake nodes of each class, as test.sh creates them.
var (
	npuNodes = []string{
		"/dev/accel/accel0", "/dev/davinci0", "/dev/davinci_manager", "/dev/devmm_svm",
		"/dev/hisi_hdc", "/dev/neuron0", "/dev/vfio/vfio",
	}
	hardwareNodes = []string{
		"/dev/bus/usb/001/001", "/dev/ttyUSB0", "/dev/ttyACM0", "/dev/video0", "/dev/media0",
		"/dev/snd/controlC0",
	}
	// neverNodes look like hardware but no switch opens them.
	neverNodes = []string{"/dev/hidraw0", "/dev/input/event0", "/dev/uinput"}
)

// needFakeNodes skips, loudly, when test.sh has not created the fake nodes,
// and checks the host can open each read-write (the control).
func needFakeNodes(t *testing.T, nodes []string) {
	t.Helper()
	for _, n := range nodes {
		fi, err := os.Stat(n)
		if err != nil {
			t.Skipf("SKIPPING the device-class probes: %s is missing (%v). test.sh, run as root, creates fake device nodes (mknod c 1 3, mode 0666) at %s before the battery; run ./test.sh as root or create them by hand", n, err, strings.Join(nodes, ", "))
		}
		if fi.Mode()&os.ModeCharDevice == 0 {
			t.Fatalf("%s is not a character device (%v); test.sh creates it as one", n, fi.Mode())
		}
		f, err := os.OpenFile(n, os.O_RDWR, 0)
		if err != nil {
			t.Fatalf("control: the host cannot open %s read-write: %v", n, err)
		}
		f.Close()
	}
}

// Each class's nodes open read-write with its own switch, at every level,
// and with no other: closed by default, with the GPU open, and with the
// other class open. The never-opened nodes stay closed with every switch
// on. Control: the host opens every node with the same probe.
func TestDeviceClasses(t *testing.T) {
	t.Parallel()
	need(t, "python3")
	all := append(append(append([]string(nil), npuNodes...), hardwareNodes...), neverNodes...)
	needFakeNodes(t, all)
	argv := append([]string{"python3", "-c", gpuOpenProbe}, all...)
	if h := onHost(t, append([]string{"/usr/bin/python3"}, argv[1:]...)...); strings.Count(h.Stdout, "OPENED-rw") != len(all) {
		t.Fatalf("control: the probe does not open the nodes on the host: %s", h)
	}
	with := func(level moat.Isolation, npu, hw, gpu bool) moat.Config {
		return levelConfig(level, func(s *moat.SecurityConfig) { s.AllowNPU, s.AllowHardware, s.AllowGPU = npu, hw, gpu })
	}
	cases := []struct {
		name    string
		cfg     moat.Config
		npu, hw bool // which class must open
	}{
		{name: "strict", cfg: moat.Config{}},
		{name: "default", cfg: levelConfig(moat.IsolationDefault, nil)},
		{name: "permissive", cfg: levelConfig(moat.IsolationPermissive, nil)},
		{name: "default AllowGPU opens neither", cfg: with(moat.IsolationDefault, false, false, true)},
		{name: "default AllowTCCPrompts opens nothing", cfg: levelConfig(moat.IsolationDefault, func(s *moat.SecurityConfig) { s.AllowTCCPrompts = true })},
		{name: "strict AllowNPU", cfg: with(moat.IsolationStrict, true, false, false), npu: true},
		{name: "default AllowNPU", cfg: with(moat.IsolationDefault, true, false, false), npu: true},
		{name: "permissive AllowNPU", cfg: with(moat.IsolationPermissive, true, false, false), npu: true},
		{name: "strict AllowHardware", cfg: with(moat.IsolationStrict, false, true, false), hw: true},
		{name: "default AllowHardware", cfg: with(moat.IsolationDefault, false, true, false), hw: true},
		{name: "permissive AllowHardware", cfg: with(moat.IsolationPermissive, false, true, false), hw: true},
		{name: "permissive, every switch", cfg: with(moat.IsolationPermissive, true, true, true), npu: true, hw: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := inSandbox(t, newSandbox(t, c.cfg), argv...)
			if !strings.Contains(r.Stdout, "DENIED-") && !strings.Contains(r.Stdout, "OPENED-") {
				t.Fatalf("the probe did not run: %s", r)
			}
			check := func(nodes []string, open bool, why string) {
				for _, n := range nodes {
					if open {
						if !strings.Contains(r.Stdout, "OPENED-rw "+n+"\n") {
							t.Errorf("%s: %s does not open read-write: %s", why, n, r)
						}
						continue
					}
					for _, mode := range []string{"ro", "wo", "rw"} {
						if strings.Contains(r.Stdout, "OPENED-"+mode+" "+n+"\n") {
							t.Errorf("%s: %s opened (%s): %s", why, n, mode, r)
						}
					}
				}
			}
			check(npuNodes, c.npu, "NPU nodes")
			check(hardwareNodes, c.hw, "hardware nodes")
			check(neverNodes, false, "nodes no switch opens")
		})
	}
}

// Without namespaces, Landlock alone keeps the classes apart: the nodes
// live in the host's /dev, and only a switched-on class has a rule for
// its nodes. Control: the same sandbox opens the class its switch opens.
func TestDeviceClassesWithoutNamespaces(t *testing.T) {
	need(t, "python3")
	all := append(append(append([]string(nil), npuNodes...), hardwareNodes...), neverNodes...)
	needFakeNodes(t, all)
	argv := append([]string{"python3", "-c", gpuOpenProbe}, all...)
	withoutNamespaces(t, func(t *testing.T) {
		for _, c := range []struct {
			name    string
			npu, hw bool
		}{{"no switch", false, false}, {"AllowNPU", true, false}, {"AllowHardware", false, true}} {
			t.Run(c.name, func(t *testing.T) {
				cfg := levelConfig(moat.IsolationDefault, func(s *moat.SecurityConfig) { s.AllowNPU, s.AllowHardware = c.npu, c.hw })
				sb := newSandbox(t, cfg)
				if rep := sb.Report(); rep.Active("namespaces") {
					t.Fatalf("the sandbox has namespaces:\n%s", rep)
				}
				r := inSandbox(t, sb, argv...)
				for _, set := range []struct {
					nodes []string
					open  bool
				}{{npuNodes, c.npu}, {hardwareNodes, c.hw}, {neverNodes, false}} {
					for _, n := range set.nodes {
						opened := strings.Contains(r.Stdout, "OPENED-rw "+n+"\n")
						if opened != set.open {
							t.Errorf("%s opened read-write = %v, want %v: %s", n, opened, set.open, r)
						}
					}
				}
			})
		}
	})
}
