package seccomp

// Linux ABI values used by the program. Every value here is the same on amd64
// and arm64; abi_linux_test.go checks them against golang.org/x/sys/unix.

// Offsets into struct seccomp_data:
//
//	struct seccomp_data { int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]; };
const (
	offNr   = 0
	offArch = 4
	offArgs = 16
)

// argLow returns the offset of the low 32 bits of args[i]. Both supported
// architectures are little-endian, so the low word comes first.
func argLow(i int) uint32 { return offArgs + 8*uint32(i) }

// argHigh returns the offset of the high 32 bits of args[i], for the one
// check that must see a whole pointer (sendto's destination address).
func argHigh(i int) uint32 { return argLow(i) + 4 }

// Filter return values (include/uapi/linux/seccomp.h) and the errnos used.
const (
	retKillProcess = 0x80000000
	retErrno       = 0x00050000 // | errno in the low 16 bits
	retAllow       = 0x7fff0000
	retUserNotif   = 0x7fc00000 // SECCOMP_RET_USER_NOTIF: the supervisor decides

	errnoEPERM      = 1
	errnoENOSYS     = 38
	errnoEOPNOTSUPP = 95
)

// AUDIT_ARCH values (include/uapi/linux/audit.h).
const (
	auditArchX86_64  = 0xc000003e
	auditArchAARCH64 = 0xc00000b7
)

// x32SyscallBit is __X32_SYSCALL_BIT: amd64 syscall numbers at or above it
// belong to the x32 ABI.
const x32SyscallBit = 0x40000000

// Namespace flags of clone and unshare (include/uapi/linux/sched.h).
const (
	cloneNewTime   = 0x00000080 // unshare/clone3 only; in clone's flags these bits are the exit signal
	cloneNewNS     = 0x00020000
	cloneNewCgroup = 0x02000000
	cloneNewUTS    = 0x04000000
	cloneNewIPC    = 0x08000000
	cloneNewUser   = 0x10000000
	cloneNewPID    = 0x20000000
	cloneNewNet    = 0x40000000
)

// Socket and terminal constants.
const (
	afUnix    = 1
	afInet    = 2
	afInet6   = 10
	afNetlink = 16

	sockStream   = 1
	sockTypeMask = 0xf // SOCK_TYPE_MASK: the rest of socket's type are SOCK_NONBLOCK/SOCK_CLOEXEC

	ipprotoTCP         = 6 // also SOL_TCP, the setsockopt level
	tcpFastopenConnect = 30

	xOK         = 1 // X_OK, in the mode of access and faccessat
	msgFastopen = 0x20000000
	perLinux    = 0x0000
	perLinux32  = 0x0008
	perUname26  = 0x0020000
	perQuery    = 0xffffffff

	tiocsti   = 0x5412
	tioclinux = 0x541c
)
