package seccomp

import "testing"

// TestTablesCoverPolicy checks that every architecture has a number for every
// rule, or lists it as absent, and that no two names share a number.
func TestTablesCoverPolicy(t *testing.T) {
	for _, arch := range []Arch{AMD64, ARM64} {
		tab, err := arch.table()
		if err != nil {
			t.Fatal(err)
		}
		named := map[string]bool{}
		for _, r := range rules {
			if named[r.name] {
				t.Errorf("rule %q listed twice", r.name)
			}
			named[r.name] = true
			_, has := tab.nr[r.name]
			if has == tab.absent[r.name] {
				t.Errorf("%s: %q: in table %v, absent %v; want exactly one", arch, r.name, has, tab.absent[r.name])
			}
		}
		byNr := map[uint32]string{}
		for name, nr := range tab.nr {
			if !named[name] {
				t.Errorf("%s: %q has a number but no rule", arch, name)
			}
			if other, dup := byNr[nr]; dup {
				t.Errorf("%s: %q and %q both have number %d", arch, name, other, nr)
			}
			byNr[nr] = name
		}
	}
}

// TestArm64Numbers checks the arm64 table against values from
// include/uapi/asm-generic/unistd.h, written out independently here.
// (sysnum_linux_arm64_test.go also checks it against golang.org/x/sys on
// arm64 hosts.)
func TestArm64Numbers(t *testing.T) {
	want := map[string]uint32{
		"lookup_dcookie": 18, "ioctl": 29, "umount2": 39, "mount": 40,
		"pivot_root": 41, "chroot": 51, "vhangup": 58, "quotactl": 60,
		"acct": 89, "personality": 92, "unshare": 97, "kexec_load": 104,
		"init_module": 105, "delete_module": 106, "clock_settime": 112,
		"syslog": 116, "ptrace": 117, "reboot": 142, "settimeofday": 170,
		"adjtimex": 171, "socket": 198, "socketpair": 199, "connect": 203, "sendto": 206,
		"setsockopt": 208, "sendmsg": 211, "add_key": 217, "request_key": 218,
		"keyctl": 219, "clone": 220, "swapon": 224, "swapoff": 225,
		"perf_event_open": 241, "fanotify_init": 262, "name_to_handle_at": 264,
		"open_by_handle_at": 265, "clock_adjtime": 266, "setns": 268,
		"sendmmsg": 269, "process_vm_readv": 270, "process_vm_writev": 271,
		"finit_module": 273, "bpf": 280, "userfaultfd": 282,
		"kexec_file_load": 294, "io_uring_setup": 425, "io_uring_enter": 426,
		"io_uring_register": 427, "open_tree": 428, "move_mount": 429,
		"fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
		"clone3": 435, "pidfd_getfd": 438, "mount_setattr": 442,
		"quotactl_fd": 443, "open_tree_attr": 467, "memfd_create": 279, "memfd_secret": 447, "fallocate": 47,
		"execve": 221, "execveat": 281, "faccessat": 48, "faccessat2": 439,
	}
	if len(want) != len(aarch64Table.nr) {
		t.Errorf("arm64 table has %d entries, want %d", len(aarch64Table.nr), len(want))
	}
	for name, nr := range want {
		if got, ok := aarch64Table.nr[name]; !ok || got != nr {
			t.Errorf("arm64 %s = %d (present %v), want %d", name, got, ok, nr)
		}
	}
}
