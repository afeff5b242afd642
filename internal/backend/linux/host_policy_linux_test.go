package linux

import (
	"slices"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/spec"
	"golang.org/x/sys/unix"
)

func TestHandledFSByABI(t *testing.T) {
	cases := []struct {
		abi  int
		has  uint64
		lack uint64
	}{
		{1, unix.LANDLOCK_ACCESS_FS_MAKE_SYM | unix.LANDLOCK_ACCESS_FS_EXECUTE, unix.LANDLOCK_ACCESS_FS_REFER},
		{2, unix.LANDLOCK_ACCESS_FS_REFER, unix.LANDLOCK_ACCESS_FS_TRUNCATE},
		{3, unix.LANDLOCK_ACCESS_FS_TRUNCATE, unix.LANDLOCK_ACCESS_FS_IOCTL_DEV},
		{5, unix.LANDLOCK_ACCESS_FS_IOCTL_DEV, unix.LANDLOCK_ACCESS_FS_RESOLVE_UNIX},
		{7, unix.LANDLOCK_ACCESS_FS_IOCTL_DEV, unix.LANDLOCK_ACCESS_FS_RESOLVE_UNIX},
	}
	for _, tc := range cases {
		got := handledFS(tc.abi)
		if got&tc.has != tc.has || got&tc.lack != 0 {
			t.Errorf("ABI %d: handled %#x, want %#x set and %#x clear", tc.abi, got, tc.has, tc.lack)
		}
	}
}

func TestBaseSpecKindsOfGrant(t *testing.T) {
	e := &Engine{policy: spec.Policy{WorkDir: "/w", Grants: []spec.Grant{
		{Path: "/r"}, {Path: "/rw", Write: true}, {Path: "/rx", Exec: true}, {Path: "/rwx", Write: true, Exec: true},
	}}, host: HostInfo{LandlockABI: 7, Seccomp: true}}
	for _, withNS := range []bool{false, true} {
		e.configure(withNS)
		s := e.base
		checks := []struct {
			list []string
			path string
		}{
			{s.ReadOnly, "/r"}, {s.ReadWrite, "/rw"}, {s.ReadExec, "/rx"}, {s.WriteExec, "/rwx"},
			{s.ReadExec, "/usr"}, {s.ReadOnly, "/etc"}, {s.DevFiles, "/dev/null"},
		}
		for _, c := range checks {
			if !slices.Contains(c.list, c.path) {
				t.Errorf("ns=%v: %s missing from its list", withNS, c.path)
			}
		}
		if slices.Contains(s.ReadExec, "/w") || slices.Contains(s.WriteExec, "/w") {
			t.Errorf("ns=%v: the working directory is executable", withNS)
		}
		if s.DenyConnect == withNS {
			t.Errorf("ns=%v: DenyConnect = %v; without a network namespace Landlock must deny connect", withNS, s.DenyConnect)
		}
		if slices.Contains(s.ReadWrite, "/dev/shm") != withNS {
			t.Errorf("ns=%v: private /dev/shm writable only with namespaces", withNS)
		}
	}
}

func TestAssessFailsClosedWithoutLandlock(t *testing.T) {
	e := &Engine{policy: spec.Policy{WorkDir: "/w"}, host: HostInfo{Seccomp: true, LandlockReason: "off"}}
	e.configure(false)
	if len(e.Missing()) == 0 {
		t.Fatal("no Landlock, yet nothing reported missing")
	}
	e = &Engine{policy: spec.Policy{WorkDir: "/w", AutoWorkDir: true}, host: HostInfo{Seccomp: true, LandlockABI: 7, SocketGuard: true}}
	e.configure(true)
	if m := e.Missing(); len(m) != 0 {
		t.Fatalf("missing %v on a full host", m)
	}
}

func TestControlPathsNeedMountNamespace(t *testing.T) {
	full := HostInfo{Seccomp: true, LandlockABI: 7, SocketGuard: true}
	tests := []struct {
		name    string
		policy  spec.Policy
		ns      bool
		missing bool
	}{
		{"auto workdir persists nothing", spec.Policy{WorkDir: "/w", AutoWorkDir: true}, false, false},
		{"supplied workdir without namespaces", spec.Policy{WorkDir: "/w"}, false, true},
		{"writable grant without namespaces", spec.Policy{WorkDir: "/w", AutoWorkDir: true, Grants: []spec.Grant{{Path: "/g", Write: true}}}, false, true},
		{"read grant without namespaces", spec.Policy{WorkDir: "/w", AutoWorkDir: true, Grants: []spec.Grant{{Path: "/g"}}}, false, false},
		{"supplied workdir with namespaces", spec.Policy{WorkDir: "/w"}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &Engine{policy: tt.policy, host: full}
			if tt.ns {
				e.control = &controlPlan{}
			}
			e.configure(tt.ns)
			got := false
			for _, m := range e.Missing() {
				got = got || strings.HasPrefix(m, "control paths:")
			}
			if got != tt.missing {
				t.Errorf("control paths missing = %v, want %v (%v)", got, tt.missing, e.Missing())
			}
		})
	}
}

func TestRlimitsPerSandboxOnlyWithUserNamespace(t *testing.T) {
	e := &Engine{policy: spec.Policy{Limits: spec.Limits{Processes: 50, MemoryBytes: 1 << 30}}, host: HostInfo{}}
	e.ns = namespaces{User: true}
	nproc := func(rs []rlimit) uint64 {
		for _, r := range rs {
			if r.Resource == unix.RLIMIT_NPROC {
				return r.Value
			}
		}
		return 0
	}
	if got := nproc(e.rlimits()); got != 50 {
		t.Errorf("in a user namespace NPROC = %d, want 50", got)
	}
	e.ns = namespaces{}
	if got := nproc(e.rlimits()); got <= 50 {
		t.Errorf("without one NPROC = %d, want the user's processes plus 50", got)
	}
	e.host.Root = true
	if got := nproc(e.rlimits()); got != 0 {
		t.Errorf("root is exempt from NPROC, yet it is set to %d", got)
	}
}

func TestLockedFlags(t *testing.T) {
	got := lockedFlags(unix.ST_RDONLY | unix.ST_NOSUID | unix.ST_RELATIME)
	if got&unix.MS_RDONLY == 0 || got&unix.MS_RELATIME == 0 || got&unix.MS_NOSUID == 0 || got&unix.MS_NOEXEC != 0 {
		t.Fatalf("lockedFlags = %#x", got)
	}
}
