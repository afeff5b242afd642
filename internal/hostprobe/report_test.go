package hostprobe

import (
	"runtime"
	"strings"
	"testing"
)

func TestHostReportFix(t *testing.T) {
	var r Report
	r.Landlock.Fix = "boot with lsm=...,landlock"
	r.UserNamespaces.Fix = "sysctl -w kernel.unprivileged_userns_clone=1"
	tests := []struct {
		piece string
		want  string // a substring of the fix; "" means no fix
	}{
		{"landlock: not supported by the kernel", "lsm=...,landlock"},
		{"seccomp: kernel has no seccomp filters", "CONFIG_SECCOMP_FILTER"},
		{"network: no network namespace, Landlock TCP rules or seccomp", "unprivileged_userns_clone"},
		{"control paths: keeping .git/hooks, .git/config and .moat-* read-only inside writable places needs a mount namespace", "unprivileged_userns_clone"},
		{"control paths: /w/link is a symbolic link, which a mount cannot pin", "the directory the link points to"},
		{"no PID namespace: a descendant that leaves the process group can outlive a SIGKILL of moat", "unprivileged_userns_clone"},
		{"no mount namespace: host Unix sockets reachable by path (e.g. in /tmp) can be connected to", "unprivileged_userns_clone"},
		{"signals to host processes of the same user are not blocked by Landlock", "Linux 6.12"},
		{"something moat has never heard of", ""},
	}
	for _, tt := range tests {
		t.Run(tt.piece, func(t *testing.T) {
			got := r.Fix(tt.piece)
			if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
				t.Errorf("Fix = %q, want it to contain %q", got, tt.want)
			}
		})
	}
	// With no host fix known, each piece still gets moat's general one.
	var none Report
	for piece, want := range map[string]string{
		"landlock: off":       "Linux 6.7 or later",
		"seccomp: off":        "CONFIG_SECCOMP_FILTER=y",
		"network: none":       "allow user namespaces on this host",
		"no PID namespace: x": "allow user namespaces on this host",
		"unheard of":          "",
	} {
		if got := none.Fix(piece); !strings.Contains(got, want) || want == "" && got != "" {
			t.Errorf("zero report: Fix(%q) = %q, want it to contain %q", piece, got, want)
		}
	}
}

func TestLandlockFix(t *testing.T) {
	tests := []struct {
		name   string
		kernel string
		lsms   string
		want   string
	}{
		{name: "old kernel", kernel: "5.10.0-23-amd64", lsms: "capability,apparmor", want: "upgrade to Linux 5.13"},
		{name: "not in lsm list", kernel: "6.1.0", lsms: "lockdown,capability,yama,apparmor", want: "boot with lsm=lockdown,capability,yama,apparmor,landlock"},
		{name: "lsm list unreadable", kernel: "6.1.0", lsms: "", want: "CONFIG_SECURITY_LANDLOCK=y"},
		{name: "listed but off", kernel: "6.1.0", lsms: "landlock,apparmor", want: "CONFIG_SECURITY_LANDLOCK=y"},
		{name: "unparsable kernel", kernel: "weird", lsms: "apparmor", want: "lsm=apparmor,landlock"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := landlockFix(tt.kernel, tt.lsms); !strings.Contains(got, tt.want) {
				t.Errorf("landlockFix(%q, %q) = %q, want it to contain %q", tt.kernel, tt.lsms, got, tt.want)
			}
		})
	}
}

func TestUserNSFix(t *testing.T) {
	tests := []struct {
		name    string
		root    bool
		sysctls map[string]string
		want    []string
		notWant []string
	}{
		{name: "debian clone switch", sysctls: map[string]string{"/proc/sys/kernel/unprivileged_userns_clone": "0"},
			want: []string{"kernel.unprivileged_userns_clone=1"}, notWant: []string{"apparmor"}},
		{name: "ubuntu apparmor", sysctls: map[string]string{"/proc/sys/kernel/apparmor_restrict_unprivileged_userns": "1"},
			want: []string{"kernel.apparmor_restrict_unprivileged_userns=0"}, notWant: []string{"unprivileged_userns_clone"}},
		{name: "no namespaces at all", sysctls: map[string]string{"/proc/sys/user/max_user_namespaces": "0"},
			want: []string{"user.max_user_namespaces"}},
		{name: "root ignores unprivileged switches", root: true, sysctls: map[string]string{"/proc/sys/kernel/unprivileged_userns_clone": "0"},
			want: []string{"container"}},
		{name: "nothing identified", sysctls: map[string]string{},
			want: []string{"kernel.unprivileged_userns_clone=1", "kernel.apparmor_restrict_unprivileged_userns=0", "user.max_user_namespaces > 0", "container"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := userNSFix(tt.root, func(p string) string { return tt.sysctls[p] })
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("userNSFix = %q, want it to contain %q", got, w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(got, w) {
					t.Errorf("userNSFix = %q, want it not to contain %q", got, w)
				}
			}
		})
	}
}

func TestCgroupFix(t *testing.T) {
	tests := []struct {
		name string
		c    Cgroups
		root bool
		want string
	}{
		{name: "writable", c: Cgroups{V2Mount: "/sys/fs/cgroup", Writable: true}, want: ""},
		{name: "nothing mounted", c: Cgroups{}, want: "mount cgroup2"},
		{name: "v1 only, unprivileged", c: Cgroups{V1Controllers: map[string]string{"memory": "/sys/fs/cgroup/memory"}}, want: "run as root or delegate a cgroup"},
		{name: "unprivileged", c: Cgroups{V2Mount: "/sys/fs/cgroup"}, want: "run as root or delegate a cgroup"},
		{name: "root, read-only", c: Cgroups{V2Mount: "/sys/fs/cgroup"}, root: true, want: "writable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cgroupFix(tt.c, tt.root)
			if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
				t.Errorf("fix = %q, want it to contain %q", got, tt.want)
			}
		})
	}
}

func TestKernelBefore(t *testing.T) {
	tests := []struct {
		name    string
		release string
		want    bool
	}{
		{name: "older minor", release: "5.10.0-23-amd64", want: true},
		{name: "older major", release: "4.19.0", want: true},
		{name: "same", release: "5.13.0", want: false},
		{name: "newer", release: "6.18.44-fc", want: false},
		{name: "suffix on minor", release: "5.4-rc1", want: true},
		{name: "garbage", release: "linux", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := kernelBefore(tt.release, landlockMinKernel); got != tt.want {
				t.Errorf("kernelBefore(%q) = %v, want %v", tt.release, got, tt.want)
			}
		})
	}
}

// TestProbeHost: the probe answers on every OS without panicking, and
// each feature that is missing says why; a missing Linux feature also
// says how to get it.
func TestProbeHost(t *testing.T) {
	r := Probe()
	features := []struct {
		name string
		f    Feature
	}{{"landlock", r.Landlock}, {"seccomp", r.Seccomp}, {"user namespaces", r.UserNamespaces}}
	for _, f := range features {
		if f.f.Available {
			if f.f.Fix != "" {
				t.Errorf("%s: available, yet a fix %q", f.name, f.f.Fix)
			}
			continue
		}
		if f.f.Detail == "" {
			t.Errorf("%s: missing with no reason", f.name)
		}
		if runtime.GOOS == "linux" && f.f.Fix == "" {
			t.Errorf("%s: missing with no fix (%s)", f.name, f.f.Detail)
		}
	}
	if runtime.GOOS != "linux" {
		if r.Landlock.Available || r.Seccomp.Available || r.UserNamespaces.Available || r.Cgroup.Writable {
			t.Errorf("a Linux feature reported on %s: %+v", runtime.GOOS, r)
		}
		return
	}
	if r.Kernel == "" || r.Machine == "" {
		t.Errorf("kernel %q, machine %q: want both", r.Kernel, r.Machine)
	}
	if r.Landlock.Available != (r.LandlockABI > 0) {
		t.Errorf("landlock available %v with ABI %d", r.Landlock.Available, r.LandlockABI)
	}
	if !r.Cgroup.Writable && r.Cgroup.Fix == "" && (r.Cgroup.V2Mount != "" || len(r.Cgroup.V1Controllers) > 0) {
		t.Errorf("cgroups not writable (%s) and no fix", r.Cgroup.Reason)
	}
}
