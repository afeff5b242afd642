package seccomp

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestABIConstants checks the package's hand-written ABI values against
// golang.org/x/sys/unix for this host (the values are the same on amd64 and
// arm64).
func TestABIConstants(t *testing.T) {
	tests := []struct {
		name      string
		got, want uint64
	}{
		{"SECCOMP_RET_KILL_PROCESS", retKillProcess, unix.SECCOMP_RET_KILL_PROCESS},
		{"SECCOMP_RET_ERRNO", retErrno, unix.SECCOMP_RET_ERRNO},
		{"SECCOMP_RET_ALLOW", retAllow, unix.SECCOMP_RET_ALLOW},
		{"EPERM", errnoEPERM, uint64(unix.EPERM)},
		{"ENOSYS", errnoENOSYS, uint64(unix.ENOSYS)},
		{"EOPNOTSUPP", errnoEOPNOTSUPP, uint64(unix.EOPNOTSUPP)},
		{"AUDIT_ARCH_X86_64", auditArchX86_64, unix.AUDIT_ARCH_X86_64},
		{"AUDIT_ARCH_AARCH64", auditArchAARCH64, unix.AUDIT_ARCH_AARCH64},
		{"CLONE_NEWTIME", cloneNewTime, unix.CLONE_NEWTIME},
		{"CLONE_NEWNS", cloneNewNS, unix.CLONE_NEWNS},
		{"CLONE_NEWCGROUP", cloneNewCgroup, unix.CLONE_NEWCGROUP},
		{"CLONE_NEWUTS", cloneNewUTS, unix.CLONE_NEWUTS},
		{"CLONE_NEWIPC", cloneNewIPC, unix.CLONE_NEWIPC},
		{"CLONE_NEWUSER", cloneNewUser, unix.CLONE_NEWUSER},
		{"CLONE_NEWPID", cloneNewPID, unix.CLONE_NEWPID},
		{"CLONE_NEWNET", cloneNewNet, unix.CLONE_NEWNET},
		{"AF_UNIX", afUnix, unix.AF_UNIX},
		{"AF_INET", afInet, unix.AF_INET},
		{"AF_INET6", afInet6, unix.AF_INET6},
		{"SOCK_STREAM", sockStream, unix.SOCK_STREAM},
		{"IPPROTO_TCP", ipprotoTCP, unix.IPPROTO_TCP},
		{"SOL_TCP", ipprotoTCP, unix.SOL_TCP},
		{"TCP_FASTOPEN_CONNECT", tcpFastopenConnect, unix.TCP_FASTOPEN_CONNECT},
		{"MSG_FASTOPEN", msgFastopen, unix.MSG_FASTOPEN},
		{"TIOCSTI", tiocsti, unix.TIOCSTI},
		{"TIOCLINUX", tioclinux, unix.TIOCLINUX},
		// Test-only values.
		{"SOCK_DGRAM", sockDgram, unix.SOCK_DGRAM},
		{"SOCK_RAW", sockRaw, unix.SOCK_RAW},
		{"SOCK_NONBLOCK", sockNonblock, unix.SOCK_NONBLOCK},
		{"SOCK_CLOEXEC", sockCloexec, unix.SOCK_CLOEXEC},
		{"AF_NETLINK", afNetlink, unix.AF_NETLINK},
		{"AF_PACKET", afPacket, unix.AF_PACKET},
		{"AF_VSOCK", afVsock, unix.AF_VSOCK},
		{"IPPROTO_MPTCP", ipprotoMPTCP, unix.IPPROTO_MPTCP},
		{"MSG_DONTWAIT", msgDontwait, unix.MSG_DONTWAIT},
		{"TCGETS", tcgets, unix.TCGETS},
		{"AUDIT_ARCH_I386", auditI386, unix.AUDIT_ARCH_I386},
		{"AUDIT_ARCH_ARM", auditARM, unix.AUDIT_ARCH_ARM},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %#x, want %#x", tt.name, tt.got, tt.want)
		}
	}
}
