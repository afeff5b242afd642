package cli

import (
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/cgroup"
)

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
		info cgroup.Info
		root bool
		want string
	}{
		{name: "writable", info: cgroup.Info{V2Mount: "/sys/fs/cgroup", Writable: true}, want: ""},
		{name: "nothing mounted", info: cgroup.Info{}, want: "mount cgroup2"},
		{name: "unprivileged", info: cgroup.Info{V2Mount: "/sys/fs/cgroup"}, want: "run as root or delegate a cgroup"},
		{name: "root, read-only", info: cgroup.Info{V2Mount: "/sys/fs/cgroup"}, root: true, want: "writable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cgroupReport(tt.info, tt.root).Fix
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
