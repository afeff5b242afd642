package linux

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/spec"
	"golang.org/x/sys/unix"
)

// A class keeps the character devices and directories its globs match,
// never a link, a regular file, a block device or a name no class opens.
func TestDeviceClassPaths(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("SKIPPING: making device nodes needs root (go test as root, as ./test.sh does)")
	}
	dir := t.TempDir()
	mk := func(name string, mode uint32, dev int) string {
		p := filepath.Join(dir, name)
		if err := unix.Mknod(p, mode|0o666, dev); err != nil {
			t.Fatal(err)
		}
		return p
	}
	char := mk("npu0", unix.S_IFCHR, int(unix.Mkdev(1, 3)))
	mk("npu1blk", unix.S_IFBLK, int(unix.Mkdev(7, 0)))
	mk("hidraw0", unix.S_IFCHR, int(unix.Mkdev(1, 3)))
	sub := filepath.Join(dir, "npudir")
	os.Mkdir(sub, 0o755)
	os.WriteFile(filepath.Join(dir, "npufile"), nil, 0o644)
	os.Symlink(char, filepath.Join(dir, "npulink"))
	c := deviceClass{Nodes: []string{filepath.Join(dir, "npu*"), filepath.Join(dir, "hidraw*"), filepath.Join(dir, "none*")}}
	got := c.paths()
	want := []string{char, sub}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("paths = %q, want %q", got, want)
	}
}

// No class names a device that neverDevice refuses, and each switch adds
// its own class to the helper's spec and nothing else.
func TestDeviceClassesSpec(t *testing.T) {
	for _, c := range []deviceClass{npuClass, hardwareClass} {
		for _, g := range c.Nodes {
			if !strings.HasPrefix(g, "/dev/") || neverDevice(g) {
				t.Errorf("node glob %q", g)
			}
		}
		for _, d := range c.Driver {
			if !strings.HasPrefix(d, "/sys/") && !strings.HasPrefix(d, "/run/udev/") {
				t.Errorf("driver path %q", d)
			}
		}
	}
	for _, n := range []string{"/dev/hidraw3", "/dev/uinput", "/dev/input", "/dev/i2c-1", "/dev/spidev0.0", "/dev/gpiochip0", "/dev/mem", "/dev/kvm"} {
		if !neverDevice(n) {
			t.Errorf("neverDevice(%q) = false", n)
		}
	}
	for _, tt := range []struct {
		name     string
		npu, hw  bool
		has, not []string
	}{
		{"neither", false, false, nil, []string{"/sys/class/accel", "/sys/class/tty", "/run/udev/data"}},
		{"npu", true, false, []string{"/sys/class/accel", "/sys/kernel/iommu_groups"}, []string{"/sys/class/tty", "/run/udev/data"}},
		{"hardware", false, true, []string{"/sys/class/tty", "/sys/class/sound", "/run/udev/data"}, []string{"/sys/class/accel"}},
		{"both", true, true, []string{"/sys/class/accel", "/sys/class/tty"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := &Engine{policy: spec.Policy{AllowNPU: tt.npu, AllowHardware: tt.hw}}
			var s helperSpec
			e.applyDeviceClasses(&s)
			for _, p := range tt.has {
				if !slices.Contains(s.ReadOnly, p) {
					t.Errorf("%s not readable: %q", p, s.ReadOnly)
				}
			}
			for _, p := range tt.not {
				if slices.Contains(s.ReadOnly, p) {
					t.Errorf("%s readable", p)
				}
			}
			if !tt.npu && !tt.hw && (len(s.DevFiles) != 0 || len(s.ReadOnly) != 0) {
				t.Errorf("with no switch: %q, %q", s.DevFiles, s.ReadOnly)
			}
		})
	}
}
