package moat_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat"
)

// makeFakeNodes creates each missing node as a copy of /dev/null (char
// 1:3, mode 0666), with the directories on its way, and removes what it
// created when t ends. It needs root.
func makeFakeNodes(t *testing.T, nodes []string) {
	t.Helper()
	var made []string // removed last first
	t.Cleanup(func() {
		for i := len(made) - 1; i >= 0; i-- {
			os.Remove(made[i])
		}
	})
	for _, n := range nodes {
		if _, err := os.Lstat(n); err == nil {
			continue
		}
		var dirs []string
		for d := filepath.Dir(n); ; d = filepath.Dir(d) {
			if _, err := os.Lstat(d); err == nil {
				break
			}
			dirs = append([]string{d}, dirs...)
		}
		for _, d := range dirs {
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
			made = append(made, d)
		}
		if err := unix.Mknod(n, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
			t.Fatalf("mknod %s: %v", n, err)
		}
		os.Chmod(n, 0o666) // past the umask
		made = append(made, n)
	}
}

// deviceProbe opens each argument read-write and prints OPEN or DENIED.
const deviceProbe = `for n in "$@"; do if (exec 3<>"$n") 2>/dev/null; then echo "OPEN $n"; else echo "DENIED $n"; fi; done`

// A sandbox run as root (capabilities dropped, still the nodes' owner)
// opens the NPU and hardware nodes only with their switches, each class
// only with its own, and never a raw HID, input or uinput node. The nodes
// are made by the test. Control: the host opens every one with the same
// probe.
func TestDeviceClassesAsRoot(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("SKIPPED, NOT PASSED: TestDeviceClassesAsRoot needs root (it makes device nodes in /dev); run the root package tests as root. The escape battery's TestDeviceClasses covers an unprivileged user")
	}
	npu := []string{"/dev/accel/accel0", "/dev/davinci0", "/dev/hisi_hdc", "/dev/neuron0", "/dev/vfio/vfio"}
	hw := []string{"/dev/bus/usb/001/001", "/dev/ttyUSB0", "/dev/ttyACM0", "/dev/video0", "/dev/snd/controlC0"}
	never := []string{"/dev/hidraw0", "/dev/input/event0", "/dev/uinput"}
	all := append(append(append([]string(nil), npu...), hw...), never...)
	makeFakeNodes(t, all)
	args := append([]string{"-c", deviceProbe, "probe"}, all...)
	host, err := exec.Command("/bin/sh", args...).CombinedOutput()
	if err != nil || strings.Count(string(host), "OPEN ") != len(all) {
		t.Fatalf("control: the host does not open every node: %v: %s", err, host)
	}
	cases := []struct {
		name              string
		npu, hw, gpu, tcc bool
		wantNPU, wantHW   bool
		isolation         moat.Isolation
	}{
		{name: "default, no switch", isolation: moat.IsolationDefault},
		{name: "permissive, GPU and TCC prompts only", isolation: moat.IsolationPermissive, gpu: true, tcc: true},
		{name: "strict AllowNPU", isolation: moat.IsolationStrict, npu: true, wantNPU: true},
		{name: "default AllowHardware", isolation: moat.IsolationDefault, hw: true, wantHW: true},
		{name: "permissive, both", isolation: moat.IsolationPermissive, npu: true, hw: true, wantNPU: true, wantHW: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sec := c.isolation.Security()
			sec.AllowNPU, sec.AllowHardware, sec.AllowGPU, sec.AllowTCCPrompts = c.npu, c.hw, c.gpu, c.tcc
			sb := newSandbox(t, moat.Config{Isolation: c.isolation, Security: &sec})
			out, err := sb.Command("/bin/sh", args...).CombinedOutput()
			if err != nil {
				t.Fatalf("probe: %v: %s", err, out)
			}
			for _, set := range []struct {
				nodes []string
				open  bool
			}{{npu, c.wantNPU}, {hw, c.wantHW}, {never, false}} {
				for _, n := range set.nodes {
					want := "DENIED " + n + "\n"
					if set.open {
						want = "OPEN " + n + "\n"
					}
					if !strings.Contains(string(out), want) {
						t.Errorf("want %q: %s", strings.TrimSpace(want), out)
					}
				}
			}
		})
	}
}
