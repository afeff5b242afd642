package seccomp

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestSysnumsARM64 checks aarch64Table against golang.org/x/sys/unix, whose
// SYS_* constants are those of the build GOARCH (arm64 here).
func TestSysnumsARM64(t *testing.T) {
	want := map[string]uint32{
		"ioctl":             unix.SYS_IOCTL,
		"socket":            unix.SYS_SOCKET,
		"connect":           unix.SYS_CONNECT,
		"sendto":            unix.SYS_SENDTO,
		"sendmsg":           unix.SYS_SENDMSG,
		"socketpair":        unix.SYS_SOCKETPAIR,
		"setsockopt":        unix.SYS_SETSOCKOPT,
		"clone":             unix.SYS_CLONE,
		"unshare":           unix.SYS_UNSHARE,
		"sendmmsg":          unix.SYS_SENDMMSG,
		"clone3":            unix.SYS_CLONE3,
		"execve":            unix.SYS_EXECVE,
		"execveat":          unix.SYS_EXECVEAT,
		"faccessat":         unix.SYS_FACCESSAT,
		"faccessat2":        unix.SYS_FACCESSAT2,
		"ptrace":            unix.SYS_PTRACE,
		"syslog":            unix.SYS_SYSLOG,
		"personality":       unix.SYS_PERSONALITY,
		"vhangup":           unix.SYS_VHANGUP,
		"pivot_root":        unix.SYS_PIVOT_ROOT,
		"adjtimex":          unix.SYS_ADJTIMEX,
		"chroot":            unix.SYS_CHROOT,
		"acct":              unix.SYS_ACCT,
		"settimeofday":      unix.SYS_SETTIMEOFDAY,
		"mount":             unix.SYS_MOUNT,
		"umount2":           unix.SYS_UMOUNT2,
		"swapon":            unix.SYS_SWAPON,
		"swapoff":           unix.SYS_SWAPOFF,
		"reboot":            unix.SYS_REBOOT,
		"init_module":       unix.SYS_INIT_MODULE,
		"delete_module":     unix.SYS_DELETE_MODULE,
		"quotactl":          unix.SYS_QUOTACTL,
		"lookup_dcookie":    unix.SYS_LOOKUP_DCOOKIE,
		"clock_settime":     unix.SYS_CLOCK_SETTIME,
		"kexec_load":        unix.SYS_KEXEC_LOAD,
		"add_key":           unix.SYS_ADD_KEY,
		"request_key":       unix.SYS_REQUEST_KEY,
		"keyctl":            unix.SYS_KEYCTL,
		"perf_event_open":   unix.SYS_PERF_EVENT_OPEN,
		"fanotify_init":     unix.SYS_FANOTIFY_INIT,
		"name_to_handle_at": unix.SYS_NAME_TO_HANDLE_AT,
		"open_by_handle_at": unix.SYS_OPEN_BY_HANDLE_AT,
		"clock_adjtime":     unix.SYS_CLOCK_ADJTIME,
		"setns":             unix.SYS_SETNS,
		"process_vm_readv":  unix.SYS_PROCESS_VM_READV,
		"process_vm_writev": unix.SYS_PROCESS_VM_WRITEV,
		"finit_module":      unix.SYS_FINIT_MODULE,
		"kexec_file_load":   unix.SYS_KEXEC_FILE_LOAD,
		"bpf":               unix.SYS_BPF,
		"userfaultfd":       unix.SYS_USERFAULTFD,
		"io_uring_setup":    unix.SYS_IO_URING_SETUP,
		"io_uring_enter":    unix.SYS_IO_URING_ENTER,
		"io_uring_register": unix.SYS_IO_URING_REGISTER,
		"open_tree":         unix.SYS_OPEN_TREE,
		"move_mount":        unix.SYS_MOVE_MOUNT,
		"fsopen":            unix.SYS_FSOPEN,
		"fsconfig":          unix.SYS_FSCONFIG,
		"fsmount":           unix.SYS_FSMOUNT,
		"fspick":            unix.SYS_FSPICK,
		"pidfd_getfd":       unix.SYS_PIDFD_GETFD,
		"mount_setattr":     unix.SYS_MOUNT_SETATTR,
		"quotactl_fd":       unix.SYS_QUOTACTL_FD,
		"open_tree_attr":    unix.SYS_OPEN_TREE_ATTR,
		"memfd_create":      unix.SYS_MEMFD_CREATE,
		"fallocate":         unix.SYS_FALLOCATE,
	}
	if len(want) != len(aarch64Table.nr) {
		t.Errorf("table has %d entries, want %d", len(aarch64Table.nr), len(want))
	}
	for name, nr := range want {
		if got, ok := aarch64Table.nr[name]; !ok || got != nr {
			t.Errorf("%s = %d (present %v), want %d (x/sys)", name, got, ok, nr)
		}
	}
}
