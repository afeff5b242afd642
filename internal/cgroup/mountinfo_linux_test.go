package cgroup

import (
	"maps"
	"reflect"
	"slices"
	"testing"
)

// Fixtures: /proc/self/mountinfo and /proc/self/cgroup of typical hosts.
const (
	// Hybrid host (this build machine): v2 at /sys/fs/cgroup/unified with
	// only hugetlb, v1 controllers beside it, PID 1 not systemd.
	hybridMountinfo = `22 1 253:0 / / rw,relatime - ext4 /dev/vda rw
23 22 0:21 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
36 31 0:33 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices
37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`
	hybridCgroup = `9:name=systemd:/
8:pids:/
7:blkio:/
6:freezer:/
5:devices:/
4:memory:/process_api/f205d41ca296e677f0ddc80891fc2a76
3:cpuset:/
2:cpuacct:/
1:cpu:/
0::/
`

	// Pure v2 host (systemd, Fedora/Ubuntu 22.04+).
	v2Mountinfo = `21 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw
24 22 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:2 - sysfs sysfs rw
30 24 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
`
	v2Cgroup = "0::/user.slice/user-1000.slice/session-2.scope\n"

	// v1-only host (CentOS 7): co-mounted cpu,cpuacct, SELinux labels,
	// named systemd hierarchy, no cgroup2 at all.
	v1Mountinfo = `25 18 0:21 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:8 - tmpfs tmpfs ro,seclabel,mode=755
26 25 0:22 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:9 - cgroup cgroup rw,seclabel,xattr,release_agent=/usr/lib/systemd/systemd-cgroups-agent,name=systemd
29 25 0:25 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:10 - cgroup cgroup rw,seclabel,cpuacct,cpu
30 25 0:26 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:11 - cgroup cgroup rw,seclabel,memory
31 25 0:27 / /sys/fs/cgroup/pids rw,nosuid,nodev,noexec,relatime shared:12 - cgroup cgroup rw,seclabel,pids
32 25 0:28 / /sys/fs/cgroup/freezer rw,nosuid,nodev,noexec,relatime shared:13 - cgroup cgroup rw,seclabel,freezer
`
	v1Cgroup = `11:pids:/user.slice
10:freezer:/
4:memory:/user.slice
3:cpuacct,cpu:/user.slice
1:name=systemd:/user.slice/user-0.slice/session-1.scope
`

	// v1 container (Docker): each hierarchy's mount shows only the
	// container's subtree, so its root is not "/".
	dockerMountinfo = `700 690 0:32 /docker/abc /sys/fs/cgroup/memory ro,nosuid,nodev,noexec,relatime master:13 - cgroup cgroup rw,memory
701 690 0:36 /docker/abc /sys/fs/cgroup/pids ro,nosuid,nodev,noexec,relatime master:17 - cgroup cgroup rw,pids
702 690 0:37 /other /sys/fs/cgroup/freezer ro,relatime - cgroup cgroup rw,freezer
`
	dockerCgroup = `8:pids:/docker/abc
6:freezer:/docker/abc
4:memory:/docker/abc/inner
`
)

func TestParseMountinfo(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []mountEntry
	}{
		{
			name: "cgroup2 line",
			in:   "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n",
			want: []mountEntry{{root: "/", mountPoint: "/sys/fs/cgroup/unified", fsType: "cgroup2", superOpts: []string{"rw"}}},
		},
		{
			name: "optional fields before separator",
			in:   "26 25 0:22 / /sys/fs/cgroup/systemd rw,nosuid shared:9 master:3 - cgroup cgroup rw,xattr,name=systemd",
			want: []mountEntry{{root: "/", mountPoint: "/sys/fs/cgroup/systemd", fsType: "cgroup", superOpts: []string{"rw", "xattr", "name=systemd"}}},
		},
		{
			name: "escaped space in mount point",
			in:   `50 1 0:40 /a\040b /mnt/my\040cg rw - cgroup2 none rw`,
			want: []mountEntry{{root: "/a b", mountPoint: "/mnt/my cg", fsType: "cgroup2", superOpts: []string{"rw"}}},
		},
		{
			name: "missing super options",
			in:   "50 1 0:40 / /x rw - cgroup2 none",
			want: []mountEntry{{root: "/", mountPoint: "/x", fsType: "cgroup2"}},
		},
		{
			name: "malformed lines skipped",
			in:   "garbage\n1 2 3\n50 1 0:40 / /x rw no-separator cgroup2\n51 1 0:40 / /x rw -\n",
			want: nil,
		},
		{name: "empty", in: "", want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := parseMountinfo(tc.in)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("parseMountinfo:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestV1Controllers(t *testing.T) {
	tests := []struct {
		name string
		opts []string
		want []string
	}{
		{"single", []string{"rw", "memory"}, []string{"memory"}},
		{"co-mounted with labels", []string{"rw", "seclabel", "cpuacct", "cpu"}, []string{"cpuacct", "cpu"}},
		{"named hierarchy", []string{"rw", "xattr", "release_agent=/x", "name=systemd"}, []string{"name=systemd"}},
		{"only options", []string{"ro", "noprefix"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := v1Controllers(mountEntry{superOpts: tc.opts}); !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseProcCgroup(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		want  string
		hasV2 bool
		v1    map[string]string
	}{
		{"hybrid", hybridCgroup, "/", true, map[string]string{
			"name=systemd": "/", "pids": "/", "blkio": "/", "freezer": "/", "devices": "/",
			"memory": "/process_api/f205d41ca296e677f0ddc80891fc2a76", "cpuset": "/", "cpuacct": "/", "cpu": "/",
		}},
		{"pure v2", v2Cgroup, "/user.slice/user-1000.slice/session-2.scope", true, map[string]string{}},
		{"v1 only", v1Cgroup, "", false, map[string]string{
			"pids": "/user.slice", "freezer": "/", "memory": "/user.slice", "cpuacct": "/user.slice",
			"cpu": "/user.slice", "name=systemd": "/user.slice/user-0.slice/session-1.scope",
		}},
		{"path with colon", "0::/a:b\n", "/a:b", true, map[string]string{}},
		{"garbage", "x\n:::\n1:cpu:relative\n", "", false, map[string]string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := parseProcCgroup(tc.in)
			if got.v2 != tc.want || got.hasV2 != tc.hasV2 || !maps.Equal(got.v1, tc.v1) {
				t.Errorf("got %+v, want v2=%q hasV2=%v v1=%v", got, tc.want, tc.hasV2, tc.v1)
			}
		})
	}
}

func TestBuildLayout(t *testing.T) {
	type hier struct{ mount, parent, rel string }
	tests := []struct {
		name      string
		mountinfo string
		self      string
		v2ctrls   []string // what the v2 root's cgroup.controllers would say
		v2        *hier
		v1        map[string]hier
		where     map[string]string
	}{
		{
			name: "hybrid", mountinfo: hybridMountinfo, self: hybridCgroup, v2ctrls: []string{"hugetlb"},
			v2: &hier{"/sys/fs/cgroup/unified", "/sys/fs/cgroup/unified", "/"},
			v1: map[string]hier{
				"memory":       {"/sys/fs/cgroup/memory", "/sys/fs/cgroup/memory/process_api/f205d41ca296e677f0ddc80891fc2a76", "/process_api/f205d41ca296e677f0ddc80891fc2a76"},
				"pids":         {"/sys/fs/cgroup/pids", "/sys/fs/cgroup/pids", "/"},
				"cpu":          {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu", "/"},
				"cpuacct":      {"/sys/fs/cgroup/cpuacct", "/sys/fs/cgroup/cpuacct", "/"},
				"cpuset":       {"/sys/fs/cgroup/cpuset", "/sys/fs/cgroup/cpuset", "/"},
				"devices":      {"/sys/fs/cgroup/devices", "/sys/fs/cgroup/devices", "/"},
				"freezer":      {"/sys/fs/cgroup/freezer", "/sys/fs/cgroup/freezer", "/"},
				"blkio":        {"/sys/fs/cgroup/blkio", "/sys/fs/cgroup/blkio", "/"},
				"name=systemd": {"/sys/fs/cgroup/systemd", "/sys/fs/cgroup/systemd", "/"},
			},
			where: map[string]string{"memory": "v1", "pids": "v1", "cpu": "v1", "hugetlb": "v2", "io": ""},
		},
		{
			name: "pure v2", mountinfo: v2Mountinfo, self: v2Cgroup,
			v2ctrls: []string{"cpuset", "cpu", "io", "memory", "hugetlb", "pids", "rdma", "misc"},
			v2: &hier{"/sys/fs/cgroup", "/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope",
				"/user.slice/user-1000.slice/session-2.scope"},
			v1:    map[string]hier{},
			where: map[string]string{"memory": "v2", "pids": "v2", "cpu": "v2", "freezer": ""},
		},
		{
			name: "v1 only", mountinfo: v1Mountinfo, self: v1Cgroup,
			v1: map[string]hier{
				"cpu":          {"/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpu,cpuacct/user.slice", "/user.slice"},
				"cpuacct":      {"/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpu,cpuacct/user.slice", "/user.slice"},
				"memory":       {"/sys/fs/cgroup/memory", "/sys/fs/cgroup/memory/user.slice", "/user.slice"},
				"pids":         {"/sys/fs/cgroup/pids", "/sys/fs/cgroup/pids/user.slice", "/user.slice"},
				"freezer":      {"/sys/fs/cgroup/freezer", "/sys/fs/cgroup/freezer", "/"},
				"name=systemd": {"/sys/fs/cgroup/systemd", "/sys/fs/cgroup/systemd/user.slice/user-0.slice/session-1.scope", "/user.slice/user-0.slice/session-1.scope"},
			},
			where: map[string]string{"memory": "v1", "pids": "v1", "cpu": "v1", "hugetlb": ""},
		},
		{
			name: "v1 container with mount roots", mountinfo: dockerMountinfo, self: dockerCgroup,
			v1: map[string]hier{
				"memory": {"/sys/fs/cgroup/memory", "/sys/fs/cgroup/memory/inner", "/docker/abc/inner"},
				"pids":   {"/sys/fs/cgroup/pids", "/sys/fs/cgroup/pids", "/docker/abc"},
				// freezer's mount shows another subtree: not usable.
			},
			where: map[string]string{"memory": "v1", "pids": "v1", "freezer": ""},
		},
		{
			name: "v2 mounted but process has no v2 line", mountinfo: v2Mountinfo, self: v1Cgroup,
			v1: map[string]hier{}, where: map[string]string{"memory": ""},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := buildLayout(tc.mountinfo, tc.self)
			l.v2Controllers = tc.v2ctrls
			switch {
			case tc.v2 == nil && l.v2 != nil:
				t.Errorf("v2 = %+v, want none", *l.v2)
			case tc.v2 != nil && l.v2 == nil:
				t.Errorf("v2 missing, want %+v", *tc.v2)
			case tc.v2 != nil && (hier{l.v2.mount, l.v2.parent, l.v2.rel}) != *tc.v2:
				t.Errorf("v2 = %+v, want %+v", *l.v2, *tc.v2)
			}
			got := map[string]hier{}
			for c, h := range l.v1 {
				got[c] = hier{h.mount, h.parent, h.rel}
			}
			if !maps.Equal(got, tc.v1) {
				t.Errorf("v1 =\n %v\nwant\n %v", got, tc.v1)
			}
			for c, w := range tc.where {
				if g := l.where(c); g != w {
					t.Errorf("where(%q) = %q, want %q", c, g, w)
				}
			}
		})
	}
}

func TestDirIn(t *testing.T) {
	tests := []struct {
		name, root, mount, cg, want string
		ok                          bool
	}{
		{"root mount", "/", "/sys/fs/cgroup/pids", "/a/b", "/sys/fs/cgroup/pids/a/b", true},
		{"root path", "/", "/sys/fs/cgroup", "/", "/sys/fs/cgroup", true},
		{"subtree mount, inside", "/docker/x", "/sys/fs/cgroup/memory", "/docker/x/y", "/sys/fs/cgroup/memory/y", true},
		{"subtree mount, exact", "/docker/x", "/m", "/docker/x", "/m", true},
		{"subtree mount, sibling prefix", "/docker/x", "/m", "/docker/xy", "", false},
		{"outside cgroup namespace", "/", "/m", "/../../user.slice", "", false},
		{"relative path", "/", "/m", "a", "", false},
		{"dot-dot element", "/", "/m", "/a/../b", "", false},
		{"trailing slash cleaned", "/", "/m", "/a/b/", "/m/a/b", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := dirIn(mountEntry{root: tc.root, mountPoint: tc.mount}, tc.cg)
			if got != tc.want || ok != tc.ok {
				t.Errorf("dirIn = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestCheckName(t *testing.T) {
	tests := []struct {
		name, in string
		ok       bool
	}{
		{"typical", "moat-0123abcd", true},
		{"dots inside", "moat.v1_x", true},
		{"empty", "", false},
		{"dot", ".", false},
		{"dotdot", "..", false},
		{"slash", "a/b", false},
		{"space", "a b", false},
		{"newline", "a\n", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := checkName(tc.in); (err == nil) != tc.ok {
				t.Errorf("checkName(%q) = %v, want ok=%v", tc.in, err, tc.ok)
			}
		})
	}
}

func FuzzParseMountinfo(f *testing.F) {
	for _, s := range []string{hybridMountinfo, v2Mountinfo, v1Mountinfo, dockerMountinfo,
		hybridCgroup, v1Cgroup, `1 2 3:4 /\0 /\1234 - - -`, "- - - - - - -", "0::\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		for _, e := range parseMountinfo(data) {
			_ = v1Controllers(e)
			_, _ = dirIn(e, "/a/b")
			_, _ = dirIn(e, e.root)
			if len(e.mountPoint) == 0 && e.fsType == "" {
				t.Fatalf("entry without mount point and type: %+v", e)
			}
		}
		_ = parseProcCgroup(data)
		l := buildLayout(data, data)
		_ = l.where("memory")
		_ = l.v1Mounts()
	})
}
