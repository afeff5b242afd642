package linux

import (
	"os"
	"path/filepath"
	"slices"
)

// deviceClass is a kind of device that a SecurityConfig switch opens
// besides the GPU (host_level_linux.go): its device nodes, and what its
// drivers and libraries read to find them.
type deviceClass struct {
	// Nodes are globs of device nodes, or of directories of them, under
	// /dev. Only character devices and directories are opened.
	Nodes []string
	// Driver are the /sys, /proc and /run paths read-only to the sandbox
	// with the class.
	Driver []string
}

// npuClass is what AllowNPU opens: neural and tensor accelerators.
var npuClass = deviceClass{
	Nodes: []string{
		// The kernel's accel subsystem (/dev/accel/accelN: Intel NPU,
		// AMD XDNA, Habana Gaudi, Qualcomm Cloud AI 100) and Google
		// TPU VMs' /dev/accelN.
		"/dev/accel*",
		// Huawei Ascend: /dev/davinciN and /dev/davinci_manager, the
		// shared virtual memory and host-device channel.
		"/dev/davinci*", "/dev/devmm_svm", "/dev/hisi_hdc", "/dev/svm[0-9]*",
		// AWS Inferentia and Trainium.
		"/dev/neuron*",
		// Habana Gaudi before the accel subsystem.
		"/dev/hl[0-9]*", "/dev/hl_controlD*",
		// Tenstorrent, Cambricon MLU, Graphcore IPU, Google Coral (PCIe).
		"/dev/tenstorrent", "/dev/cambricon*", "/dev/ipu[0-9]*", "/dev/apex_*",
		// VFIO: how TPU v5 and later, and other passed-through devices,
		// are driven from user space. A VFIO group gives its device's
		// registers and DMA to whoever may open it.
		"/dev/vfio",
	},
	Driver: []string{
		"/sys/class/accel", "/sys/class/neuron_device", "/sys/devices/virtual/neuron_device",
		"/sys/class/habanalabs", "/sys/class/tenstorrent", "/sys/class/apex", "/sys/class/cambricon",
		"/sys/module/intel_vpu", "/sys/module/amdxdna", "/sys/module/habanalabs", "/sys/module/qaic",
		"/sys/module/neuron", "/sys/module/vfio", "/sys/module/vfio_pci",
		"/sys/kernel/iommu_groups", "/sys/bus/pci", "/sys/dev", "/sys/devices",
	},
}

// hardwareClass is what AllowHardware opens: USB, serial ports, cameras
// and audio. Never in it: input devices (/dev/input, /dev/hidraw*: every
// keystroke, and security keys), /dev/uinput (typing into the host), I2C,
// SPI and GPIO (the board's own buses), DMA heaps (memory outside every
// limit), block devices.
var hardwareClass = deviceClass{
	Nodes: []string{
		// USB through libusb, and the USB character devices (printers,
		// non-input HID).
		"/dev/bus/usb", "/dev/usb",
		// Serial ports: USB adapters, modems and boards, the PC's UARTs,
		// ARM and SoC UARTs, Bluetooth serial, and the by-id links.
		"/dev/ttyUSB*", "/dev/ttyACM*", "/dev/ttyS*", "/dev/ttyAMA*", "/dev/ttyTHS*",
		"/dev/ttymxc*", "/dev/rfcomm*", "/dev/serial",
		// Cameras and video capture (V4L2, the media controller).
		"/dev/video*", "/dev/media*", "/dev/v4l-subdev*", "/dev/v4l",
		// Audio: ALSA, and OSS emulation.
		"/dev/snd", "/dev/dsp*", "/dev/mixer*", "/dev/audio*", "/dev/sequencer*",
	},
	Driver: []string{
		"/sys/bus/usb", "/sys/bus/usb-serial", "/sys/class/tty", "/sys/class/video4linux",
		"/sys/class/sound", "/sys/class/usbmisc", "/sys/bus/media", "/sys/dev", "/sys/devices",
		// libudev's device properties (no sockets: the control socket is
		// one level up and stays out).
		"/run/udev/data",
	},
}

// neverDevice reports the device names that no class opens, even where a
// glob would match one.
func neverDevice(p string) bool {
	base := filepath.Base(p)
	for _, pat := range []string{"hidraw*", "uinput", "input", "i2c-*", "spidev*", "gpiochip*", "dma_heap", "mem", "kmem", "port", "kvm"} {
		if ok, _ := filepath.Match(pat, base); ok {
			return true
		}
	}
	return false
}

// paths lists the class's device nodes present on this host: the
// character devices and the directories its globs match, links and
// everything else left out.
func (c deviceClass) paths() []string {
	var out []string
	for _, g := range c.Nodes {
		matches, _ := filepath.Glob(g)
		for _, m := range matches {
			fi, err := os.Lstat(m)
			if err != nil || neverDevice(m) || slices.Contains(out, m) {
				continue
			}
			if fi.IsDir() || fi.Mode()&os.ModeCharDevice != 0 {
				out = append(out, m)
			}
		}
	}
	return out
}

// applyDeviceClasses opens the device classes the policy allows besides
// the GPU: their nodes read-write with ioctl, their driver files
// read-only.
func (e *Engine) applyDeviceClasses(s *helperSpec) {
	for _, c := range []struct {
		on    bool
		class deviceClass
	}{
		{e.policy.AllowNPU, npuClass},
		{e.policy.AllowHardware, hardwareClass},
	} {
		if !c.on {
			continue
		}
		s.DevFiles = append(s.DevFiles, c.class.paths()...)
		for _, d := range c.class.Driver {
			if !slices.Contains(s.ReadOnly, d) {
				s.ReadOnly = append(s.ReadOnly, d)
			}
		}
	}
}
