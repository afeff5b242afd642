package seccomp

import (
	"encoding/binary"
	"fmt"
	"testing"

	"golang.org/x/net/bpf"
)

// seccompData encodes struct seccomp_data for golang.org/x/net/bpf's VM.
//
// The kernel loads each 32-bit word of seccomp_data in native (here: little)
// endianness, but the x/net/bpf VM always loads big-endian, as for network
// packets. So every 32-bit word is written big-endian at the offset where the
// kernel finds it: nr at 0, arch at 4, ip low/high at 8/12, and args[i] low
// word at 16+8i, high word at 20+8i (a u64's low word comes first in
// little-endian memory). A program then loads the same values in the VM as in
// the kernel.
func seccompData(nr, audit uint32, args [6]uint64) []byte {
	b := make([]byte, 64)
	put := func(off int, v uint32) { binary.BigEndian.PutUint32(b[off:], v) }
	put(0, nr)
	put(4, audit)
	put(8, 0x1000) // instruction pointer, unused by the program
	for i, a := range args {
		put(16+8*i, uint32(a))
		put(20+8*i, uint32(a>>32))
	}
	return b
}

// Test-only numbers of ordinary syscalls the program does not name.
var extraNr = map[Arch]map[string]uint32{
	AMD64: {"read": 0, "write": 1, "getpid": 39, "execve": 59, "openat": 257},
	ARM64: {"openat": 56, "read": 63, "write": 64, "getpid": 172, "execve": 221},
}

func sysnum(t *testing.T, arch Arch, name string) uint32 {
	t.Helper()
	if nr, ok := extraNr[arch][name]; ok {
		return nr
	}
	tab, err := arch.table()
	if err != nil {
		t.Fatal(err)
	}
	nr, ok := tab.nr[name]
	if !ok {
		t.Fatalf("%s: no number for %q", arch, name)
	}
	return nr
}

const (
	wantAllow  = retAllow
	wantEPERM  = retErrno | 1
	wantENOSYS = retErrno | 38
	wantKill   = retKillProcess
	wantNotify = retUserNotif

	auditI386 = 0x40000003
	auditARM  = 0x40000028

	sockDgram    = 2
	sockRaw      = 3
	sockNonblock = 0x800
	sockCloexec  = 0x80000
	afPacket     = 17
	afVsock      = 40
	ipprotoUDP   = 17
	ipprotoMPTCP = 262
	msgDontwait  = 0x40
	tcgets       = 0x5401
	cloneFiles   = 0x400
	cloneVM      = 0x100
	cloneThread  = 0x10000
	cloneFS      = 0x200
	cloneSighand = 0x800
	tcpNodelay   = 1
	solSocket    = 1
)

type vmCase struct {
	name  string
	sys   string  // syscall name, looked up per arch
	nr    *uint32 // raw syscall number instead of sys
	audit uint32  // seccomp_data.arch; 0 means the target's own
	only  Arch    // run on this arch only; "" means both
	args  [6]uint64
	inet  bool // Options.AllowInetStream
	sup   bool // Options.SuperviseSockets
	want  uint32
}

func nrOf(v uint32) *uint32 { return &v }

func vmCases() []vmCase {
	cs := []vmCase{
		// Ordinary calls.
		{name: "read", sys: "read", want: wantAllow},
		{name: "write", sys: "write", want: wantAllow},
		{name: "openat", sys: "openat", want: wantAllow},
		{name: "execve", sys: "execve", want: wantAllow},
		{name: "getpid", sys: "getpid", want: wantAllow},
		{name: "clone thread", sys: "clone", args: [6]uint64{cloneVM | cloneFS | cloneFiles | cloneSighand | cloneThread}, want: wantAllow},
		{name: "clone fork SIGCHLD", sys: "clone", args: [6]uint64{17}, want: wantAllow},
		{name: "clone NEWTIME bit is exit signal", sys: "clone", args: [6]uint64{cloneNewTime}, want: wantAllow},
		{name: "clone NEWUSER in high word only", sys: "clone", args: [6]uint64{cloneNewUser << 32}, want: wantAllow},
		{name: "unshare FILES", sys: "unshare", args: [6]uint64{cloneFiles}, want: wantAllow},
		{name: "unshare FS", sys: "unshare", args: [6]uint64{cloneFS}, want: wantAllow},
		{name: "clone3", sys: "clone3", want: wantENOSYS},

		// ioctl.
		{name: "ioctl TIOCSTI", sys: "ioctl", args: [6]uint64{0, tiocsti}, want: wantEPERM},
		{name: "ioctl TIOCSTI high word", sys: "ioctl", args: [6]uint64{0, tiocsti | 1<<32}, want: wantEPERM},
		{name: "ioctl TIOCLINUX", sys: "ioctl", args: [6]uint64{0, tioclinux}, want: wantEPERM},
		{name: "ioctl TIOCLINUX high word", sys: "ioctl", args: [6]uint64{0, tioclinux | 0xffffffff<<32}, want: wantEPERM},
		{name: "ioctl TCGETS", sys: "ioctl", args: [6]uint64{0, tcgets}, want: wantAllow},
		{name: "ioctl TIOCSTI as fd", sys: "ioctl", args: [6]uint64{tiocsti, tcgets}, want: wantAllow},

		// socket without inet.
		{name: "socket unix", sys: "socket", args: [6]uint64{afUnix, sockStream}, want: wantAllow},
		{name: "socket unix dgram", sys: "socket", args: [6]uint64{afUnix, sockDgram | sockCloexec}, want: wantAllow},
		{name: "socket unix high word", sys: "socket", args: [6]uint64{afUnix | 1<<32, sockStream}, want: wantAllow},
		{name: "socket inet stream", sys: "socket", args: [6]uint64{afInet, sockStream}, want: wantEPERM},
		{name: "socket inet6 stream", sys: "socket", args: [6]uint64{afInet6, sockStream}, want: wantEPERM},
		{name: "socket inet high word", sys: "socket", args: [6]uint64{afInet | 1<<32, sockStream}, want: wantEPERM},
		{name: "socket inet dgram", sys: "socket", args: [6]uint64{afInet, sockDgram}, want: wantEPERM},
		{name: "socket netlink", sys: "socket", args: [6]uint64{afNetlink, sockRaw}, want: wantEPERM},
		{name: "socket packet", sys: "socket", args: [6]uint64{afPacket, sockRaw}, want: wantEPERM},
		{name: "socket vsock", sys: "socket", args: [6]uint64{afVsock, sockStream}, want: wantEPERM},
		{name: "socketpair unix", sys: "socketpair", args: [6]uint64{afUnix, sockStream}, want: wantAllow},
		{name: "socketpair inet", sys: "socketpair", args: [6]uint64{afInet, sockStream}, want: wantEPERM},
		{name: "socketpair netlink", sys: "socketpair", args: [6]uint64{afNetlink, sockRaw}, want: wantEPERM},

		// socket with inet.
		{name: "inet: socket unix", inet: true, sys: "socket", args: [6]uint64{afUnix, sockDgram}, want: wantAllow},
		{name: "inet: socket inet stream", inet: true, sys: "socket", args: [6]uint64{afInet, sockStream}, want: wantAllow},
		{name: "inet: socket inet6 stream", inet: true, sys: "socket", args: [6]uint64{afInet6, sockStream}, want: wantAllow},
		{name: "inet: socket inet stream tcp", inet: true, sys: "socket", args: [6]uint64{afInet, sockStream, ipprotoTCP}, want: wantAllow},
		{name: "inet: socket inet stream nonblock cloexec", inet: true, sys: "socket", args: [6]uint64{afInet, sockStream | sockNonblock | sockCloexec}, want: wantAllow},
		{name: "inet: socket inet high words", inet: true, sys: "socket", args: [6]uint64{afInet | 1<<32, sockStream | 1<<32, ipprotoTCP | 1<<32}, want: wantAllow},
		{name: "inet: socket inet dgram", inet: true, sys: "socket", args: [6]uint64{afInet, sockDgram}, want: wantEPERM},
		{name: "inet: socket inet6 dgram", inet: true, sys: "socket", args: [6]uint64{afInet6, sockDgram | sockCloexec}, want: wantEPERM},
		{name: "inet: socket inet raw", inet: true, sys: "socket", args: [6]uint64{afInet, sockRaw, 255}, want: wantEPERM},
		{name: "inet: socket inet stream mptcp", inet: true, sys: "socket", args: [6]uint64{afInet, sockStream, ipprotoMPTCP}, want: wantEPERM},
		{name: "inet: socket inet6 stream mptcp", inet: true, sys: "socket", args: [6]uint64{afInet6, sockStream, ipprotoMPTCP}, want: wantEPERM},
		{name: "inet: socket inet stream udp", inet: true, sys: "socket", args: [6]uint64{afInet, sockStream, ipprotoUDP}, want: wantEPERM},
		{name: "inet: socket inet stream sctp", inet: true, sys: "socket", args: [6]uint64{afInet, sockStream, 132}, want: wantEPERM},
		{name: "inet: socket netlink", inet: true, sys: "socket", args: [6]uint64{afNetlink, sockRaw}, want: wantEPERM},
		{name: "inet: socket packet", inet: true, sys: "socket", args: [6]uint64{afPacket, sockRaw}, want: wantEPERM},
		{name: "inet: socket vsock", inet: true, sys: "socket", args: [6]uint64{afVsock, sockStream}, want: wantEPERM},
		{name: "inet: socketpair inet", inet: true, sys: "socketpair", args: [6]uint64{afInet, sockStream}, want: wantEPERM},

		// TCP Fast Open.
		{name: "sendto plain", sys: "sendto", args: [6]uint64{3, 0, 1, msgDontwait}, want: wantAllow},
		{name: "sendto FASTOPEN", sys: "sendto", args: [6]uint64{3, 0, 1, msgFastopen}, want: wantEPERM},
		{name: "sendto FASTOPEN|DONTWAIT", sys: "sendto", args: [6]uint64{3, 0, 1, msgFastopen | msgDontwait}, want: wantEPERM},
		{name: "sendto FASTOPEN in arg2", sys: "sendto", args: [6]uint64{3, 0, msgFastopen, 0}, want: wantAllow},
		{name: "sendmsg plain", sys: "sendmsg", args: [6]uint64{3, 0, msgDontwait}, want: wantAllow},
		{name: "sendmsg FASTOPEN", sys: "sendmsg", args: [6]uint64{3, 0, msgFastopen}, want: wantEPERM},
		{name: "sendmmsg plain", sys: "sendmmsg", args: [6]uint64{3, 0, 1, 0}, want: wantAllow},
		{name: "sendmmsg FASTOPEN", sys: "sendmmsg", args: [6]uint64{3, 0, 1, msgFastopen}, want: wantEPERM},
		{name: "inet: sendto FASTOPEN", inet: true, sys: "sendto", args: [6]uint64{3, 0, 1, msgFastopen}, want: wantEPERM},
		{name: "setsockopt TCP_FASTOPEN_CONNECT", sys: "setsockopt", args: [6]uint64{3, ipprotoTCP, tcpFastopenConnect}, want: wantEPERM},
		{name: "setsockopt TCP_FASTOPEN_CONNECT high words", sys: "setsockopt", args: [6]uint64{3, ipprotoTCP | 1<<32, tcpFastopenConnect | 1<<32}, want: wantEPERM},
		{name: "inet: setsockopt TCP_FASTOPEN_CONNECT", inet: true, sys: "setsockopt", args: [6]uint64{3, ipprotoTCP, tcpFastopenConnect}, want: wantEPERM},
		{name: "setsockopt TCP_NODELAY", sys: "setsockopt", args: [6]uint64{3, ipprotoTCP, tcpNodelay}, want: wantAllow},
		{name: "setsockopt SOL_SOCKET optname 30", sys: "setsockopt", args: [6]uint64{3, solSocket, tcpFastopenConnect}, want: wantAllow},

		// Architecture and ABI.
		{name: "x32 getpid", nr: nrOf(x32SyscallBit + 39), only: AMD64, want: wantENOSYS},
		{name: "x32 socket", nr: nrOf(x32SyscallBit + 41), only: AMD64, args: [6]uint64{afUnix, sockStream}, want: wantENOSYS},
		{name: "negative nr", nr: nrOf(0xffffffff), only: AMD64, want: wantENOSYS},
		{name: "nr 0x40000027 is not x32", nr: nrOf(x32SyscallBit + 39), only: ARM64, want: wantAllow},
		{name: "i386 socket", sys: "socket", audit: auditI386, args: [6]uint64{afUnix, sockStream}, want: wantKill},
		{name: "i386 getpid", nr: nrOf(20), audit: auditI386, want: wantKill},
		{name: "arm socket", sys: "socket", audit: auditARM, args: [6]uint64{afUnix, sockStream}, want: wantKill},
		{name: "amd64 data", sys: "read", audit: auditArchX86_64, only: ARM64, want: wantKill},
		{name: "aarch64 data", sys: "read", audit: auditArchAARCH64, only: AMD64, want: wantKill},
		{name: "inet: i386 socket", inet: true, sys: "socket", audit: auditI386, args: [6]uint64{afInet, sockStream}, want: wantKill},

		// Socket supervision: every call that can name a Unix socket's
		// address goes to the supervisor, and only those.
		{name: "connect unsupervised", sys: "connect", args: [6]uint64{3, 0x1000, 110}, want: wantAllow},
		{name: "inet: connect unsupervised", inet: true, sys: "connect", args: [6]uint64{3, 0x1000, 16}, want: wantAllow},
		{name: "sup: connect", sup: true, sys: "connect", args: [6]uint64{3, 0x1000, 110}, want: wantNotify},
		{name: "sup: connect NULL", sup: true, sys: "connect", args: [6]uint64{3, 0, 0}, want: wantNotify},
		{name: "sup inet: connect", sup: true, inet: true, sys: "connect", args: [6]uint64{3, 0x1000, 16}, want: wantNotify},
		{name: "sup: sendto no address", sup: true, sys: "sendto", args: [6]uint64{3, 0x1000, 10, 0, 0, 0}, want: wantAllow},
		{name: "sup: sendto no address, length set", sup: true, sys: "sendto", args: [6]uint64{3, 0x1000, 10, msgDontwait, 0, 110}, want: wantAllow},
		{name: "sup: sendto address", sup: true, sys: "sendto", args: [6]uint64{3, 0x1000, 10, 0, 0x2000, 110}, want: wantNotify},
		{name: "sup: sendto address, length 0", sup: true, sys: "sendto", args: [6]uint64{3, 0x1000, 10, 0, 0x2000, 0}, want: wantNotify},
		{name: "sup: sendto address in high word only", sup: true, sys: "sendto", args: [6]uint64{3, 0x1000, 10, 0, 0x7fff << 32, 110}, want: wantNotify},
		{name: "sup: sendto FASTOPEN", sup: true, sys: "sendto", args: [6]uint64{3, 0x1000, 10, msgFastopen, 0x2000, 16}, want: wantEPERM},
		{name: "sup: sendto FASTOPEN no address", sup: true, sys: "sendto", args: [6]uint64{3, 0x1000, 10, msgFastopen, 0, 0}, want: wantEPERM},
		{name: "sup: sendmsg", sup: true, sys: "sendmsg", args: [6]uint64{3, 0x1000, 0}, want: wantNotify},
		{name: "sup: sendmsg FASTOPEN", sup: true, sys: "sendmsg", args: [6]uint64{3, 0x1000, msgFastopen}, want: wantEPERM},
		{name: "sup: sendmmsg", sup: true, sys: "sendmmsg", args: [6]uint64{3, 0x1000, 1, 0}, want: wantNotify},
		{name: "sup: sendmmsg FASTOPEN", sup: true, sys: "sendmmsg", args: [6]uint64{3, 0x1000, 1, msgFastopen}, want: wantEPERM},
		{name: "sup inet: sendmsg", sup: true, inet: true, sys: "sendmsg", args: [6]uint64{3, 0x1000, 0}, want: wantNotify},
		{name: "sup: write", sup: true, sys: "write", args: [6]uint64{3, 0x1000, 10}, want: wantAllow},
		{name: "sup: socket unix", sup: true, sys: "socket", args: [6]uint64{afUnix, sockDgram}, want: wantAllow},
		{name: "sup: socket inet", sup: true, sys: "socket", args: [6]uint64{afInet, sockStream}, want: wantEPERM},
		{name: "sup inet: socket inet", sup: true, inet: true, sys: "socket", args: [6]uint64{afInet, sockStream}, want: wantAllow},
		{name: "sup: ptrace", sup: true, sys: "ptrace", want: wantEPERM},
		{name: "sup: i386 connect", sup: true, nr: nrOf(362), audit: auditI386, want: wantKill},
	}

	for _, f := range []uint64{cloneNewNS, cloneNewCgroup, cloneNewUTS, cloneNewIPC, cloneNewUser, cloneNewPID, cloneNewNet} {
		cs = append(cs,
			vmCase{name: fmt.Sprintf("clone %#x", f), sys: "clone", args: [6]uint64{f | 17}, want: wantEPERM},
			vmCase{name: fmt.Sprintf("unshare %#x", f), sys: "unshare", args: [6]uint64{f}, want: wantEPERM},
			vmCase{name: fmt.Sprintf("unshare %#x|FILES", f), sys: "unshare", args: [6]uint64{f | cloneFiles}, want: wantEPERM},
		)
	}
	cs = append(cs, vmCase{name: "unshare NEWTIME", sys: "unshare", args: [6]uint64{cloneNewTime}, want: wantEPERM})

	// Written out here rather than taken from rules, so that a syscall
	// dropped from the policy fails the test.
	denied := []string{
		"ptrace", "process_vm_readv", "process_vm_writev", "keyctl", "add_key",
		"request_key", "bpf", "userfaultfd", "perf_event_open", "io_uring_setup",
		"io_uring_enter", "io_uring_register", "mount", "umount2", "pivot_root",
		"chroot", "setns", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount",
		"open_tree", "mount_setattr", "open_tree_attr", "kexec_load",
		"kexec_file_load", "init_module", "finit_module", "delete_module", "reboot",
		"swapon", "swapoff", "acct", "syslog", "open_by_handle_at",
		"name_to_handle_at", "fanotify_init", "lookup_dcookie", "vhangup",
		"pidfd_getfd", "quotactl", "quotactl_fd", "settimeofday", "clock_settime",
		"clock_adjtime", "adjtimex",
	}
	for _, s := range denied {
		cs = append(cs,
			vmCase{name: s, sys: s, want: wantEPERM},
			vmCase{name: "inet: " + s, inet: true, sys: s, want: wantEPERM},
		)
	}
	cs = append(cs,
		vmCase{name: "memfd plain", sys: "memfd_create", args: [6]uint64{0, 0}, want: wantENOSYS},
		vmCase{name: "memfd cloexec", sys: "memfd_create", args: [6]uint64{0, 1}, want: wantENOSYS},
		vmCase{name: "memfd exec", sys: "memfd_create", args: [6]uint64{0, 0x10}, want: wantENOSYS},
		vmCase{name: "memfd noexec seal", sys: "memfd_create", args: [6]uint64{0, 0x8 | 1}, want: wantENOSYS},
		vmCase{name: "memfd secret", sys: "memfd_secret", args: [6]uint64{0}, want: wantENOSYS},
		vmCase{name: "fallocate mode 0", sys: "fallocate", args: [6]uint64{3, 0, 0, 1 << 30}, want: retErrno | 95},
		vmCase{name: "fallocate keep size", sys: "fallocate", args: [6]uint64{3, 1, 0, 20 << 30}, want: retErrno | 95},
		vmCase{name: "fallocate punch hole", sys: "fallocate", args: [6]uint64{3, 3, 0, 4096}, want: retErrno | 95},
		vmCase{name: "personality query", sys: "personality", args: [6]uint64{0xffffffff}, want: wantAllow},
		vmCase{name: "personality linux", sys: "personality", args: [6]uint64{0}, want: wantAllow},
		vmCase{name: "personality linux32", sys: "personality", args: [6]uint64{8}, want: wantAllow},
		vmCase{name: "personality no randomize", sys: "personality", args: [6]uint64{0x0040000}, want: wantEPERM},
		vmCase{name: "personality read implies exec", sys: "personality", args: [6]uint64{0x0400000}, want: wantEPERM},
	)
	for _, s := range []string{"iopl", "ioperm", "uselib", "modify_ldt"} {
		cs = append(cs, vmCase{name: s, sys: s, only: AMD64, want: wantEPERM})
	}
	// Supervision changes nothing but the calls it hands over.
	handed := map[string]bool{"connect": true, "sendmsg": true, "sendmmsg": true}
	for _, c := range cs {
		if !c.sup && !handed[c.sys] {
			c.sup, c.name = true, "sup same: "+c.name
			cs = append(cs, c)
		}
	}
	return cs
}

func TestProgramVM(t *testing.T) {
	for _, arch := range []Arch{AMD64, ARM64} {
		vms := map[Options]*bpf.VM{}
		for _, inet := range []bool{false, true} {
			for _, sup := range []bool{false, true} {
				opts := Options{AllowInetStream: inet, SuperviseSockets: sup}
				prog, err := Build(arch, opts)
				if err != nil {
					t.Fatal(err)
				}
				vm, err := bpf.NewVM(prog)
				if err != nil {
					t.Fatalf("%s: NewVM: %v", arch, err)
				}
				vms[opts] = vm
			}
		}
		for _, c := range vmCases() {
			if c.only != "" && c.only != arch {
				continue
			}
			t.Run(string(arch)+"/"+c.name, func(t *testing.T) {
				nr := c.nr
				if nr == nil {
					nr = nrOf(sysnum(t, arch, c.sys))
				}
				audit := c.audit
				if audit == 0 {
					tab, _ := arch.table()
					audit = tab.audit
				}
				got, err := vms[Options{AllowInetStream: c.inet, SuperviseSockets: c.sup}].Run(seccompData(*nr, audit, c.args))
				if err != nil {
					t.Fatal(err)
				}
				if uint32(got) != c.want {
					t.Errorf("nr %d args %#x: got %#x, want %#x", *nr, c.args, uint32(got), c.want)
				}
			})
		}
	}
}

// TestProgramVMAbsentSyscalls checks that syscalls arm64 lacks fall to the
// default: arm64's numbers 172..173 and 134 are other, ordinary syscalls.
func TestProgramVMAbsentSyscalls(t *testing.T) {
	prog, err := Build(ARM64, Options{})
	if err != nil {
		t.Fatal(err)
	}
	vm, err := bpf.NewVM(prog)
	if err != nil {
		t.Fatal(err)
	}
	for _, nr := range []uint32{134, 172, 173} { // rt_sigaction, getpid, getppid on arm64
		got, err := vm.Run(seccompData(nr, auditArchAARCH64, [6]uint64{}))
		if err != nil || uint32(got) != wantAllow {
			t.Errorf("arm64 nr %d: got %#x, %v; want %#x", nr, uint32(got), err, wantAllow)
		}
	}
}

// TestProgramVMObserve checks the options that hand calls to the
// supervisor only to be observed: every execve and execveat with
// SuperviseExec, and the socket calls the policy refuses with
// NotifyRefusedSockets. The calls the policy allows stay in the kernel,
// and without the options nothing changes.
func TestProgramVMObserve(t *testing.T) {
	observe := Options{AllowInetStream: true, SuperviseSockets: true, SuperviseExec: true, NotifyRefusedSockets: true}
	cases := []struct {
		name string
		opts Options
		sys  string
		args [6]uint64
		want uint32
	}{
		{"execve observed", observe, "execve", [6]uint64{0x1000}, wantNotify},
		{"execveat observed", observe, "execveat", [6]uint64{3, 0x1000, 0, 0, 0x1000}, wantNotify},
		{"execve plain", Options{SuperviseSockets: true}, "execve", [6]uint64{0x1000}, wantAllow},
		{"execveat plain", Options{}, "execveat", [6]uint64{3, 0x1000}, wantAllow},
		{"udp observed", observe, "socket", [6]uint64{afInet, sockDgram}, wantNotify},
		{"udp6 observed", observe, "socket", [6]uint64{afInet6, sockDgram | sockCloexec}, wantNotify},
		{"raw observed", observe, "socket", [6]uint64{afInet, 3}, wantNotify},
		{"netlink refused in the filter", observe, "socket", [6]uint64{16, 3}, wantEPERM},
		{"netlink refused in the filter, no inet", Options{NotifyRefusedSockets: true}, "socket", [6]uint64{16, 3}, wantEPERM},
		{"packet observed", observe, "socket", [6]uint64{17, 3}, wantNotify},
		{"mptcp observed", observe, "socket", [6]uint64{afInet, sockStream, 262}, wantNotify},
		{"inet pair observed", observe, "socketpair", [6]uint64{afInet, sockStream}, wantNotify},
		{"tcp allowed", observe, "socket", [6]uint64{afInet, sockStream}, wantAllow},
		{"unix allowed", observe, "socket", [6]uint64{afUnix, sockDgram}, wantAllow},
		{"unix pair allowed", observe, "socketpair", [6]uint64{afUnix, sockStream}, wantAllow},
		{"tcp refused without inet, observed", Options{NotifyRefusedSockets: true}, "socket", [6]uint64{afInet, sockStream}, wantNotify},
		{"udp plain", Options{AllowInetStream: true, SuperviseSockets: true}, "socket", [6]uint64{afInet, sockDgram}, wantEPERM},
		{"inet pair plain", Options{}, "socketpair", [6]uint64{afInet, sockStream}, wantEPERM},
		{"connect still supervised", observe, "connect", [6]uint64{3, 0x1000, 16}, wantNotify},
		{"read untouched", observe, "read", [6]uint64{}, wantAllow},
		{"faccessat X_OK observed", observe, "faccessat", [6]uint64{0xffffff9c, 0x1000, 1}, wantNotify},
		{"faccessat R_OK|X_OK observed", observe, "faccessat2", [6]uint64{3, 0x1000, 5, 0}, wantNotify},
		{"faccessat R_OK untouched", observe, "faccessat", [6]uint64{3, 0x1000, 4}, wantAllow},
		{"faccessat F_OK untouched", observe, "faccessat2", [6]uint64{3, 0x1000, 0, 1}, wantAllow},
		{"faccessat X_OK plain", Options{}, "faccessat", [6]uint64{3, 0x1000, 1}, wantAllow},
	}
	for _, arch := range []Arch{AMD64, ARM64} {
		tab, _ := arch.table()
		for _, c := range cases {
			t.Run(string(arch)+"/"+c.name, func(t *testing.T) {
				prog, err := Build(arch, c.opts)
				if err != nil {
					t.Fatal(err)
				}
				vm, err := bpf.NewVM(prog)
				if err != nil {
					t.Fatal(err)
				}
				got, err := vm.Run(seccompData(sysnum(t, arch, c.sys), tab.audit, c.args))
				if err != nil {
					t.Fatal(err)
				}
				if uint32(got) != c.want {
					t.Errorf("%s %#x: got %#x, want %#x", c.sys, c.args, uint32(got), c.want)
				}
			})
		}
	}
}

// TestPassExecPrefix: the prefix lets exactly the execve with the given
// pathname pointer through; another pointer, one that matches in one
// half only, another syscall with that argument, and another
// architecture go on to the program.
func TestPassExecPrefix(t *testing.T) {
	const path = 0x0000_7fff_1234_5678
	opts := Options{SuperviseExec: true, SuperviseSockets: true, NotifyRefusedSockets: true}
	for _, arch := range []Arch{AMD64, ARM64} {
		tab, _ := arch.table()
		prog, err := Build(arch, opts)
		if err != nil {
			t.Fatal(err)
		}
		prefix, err := passExecPrefix(arch, path)
		if err != nil {
			t.Fatal(err)
		}
		vm, err := bpf.NewVM(append(prefix, prog...))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name  string
			sys   string
			audit uint32
			arg0  uint64
			want  uint32
		}{
			{"the command's exec", "execve", 0, path, wantAllow},
			{"another exec", "execve", 0, path + 8, wantNotify},
			{"high half differs", "execve", 0, path ^ 1<<40, wantNotify},
			{"low half differs", "execve", 0, path &^ 0xff, wantNotify},
			{"execveat", "execveat", 0, path, wantNotify},
			{"udp with the pointer", "socket", 0, path, wantNotify},
			{"another arch", "execve", 0x40000003, path, retKillProcess},
		} {
			t.Run(string(arch)+"/"+c.name, func(t *testing.T) {
				audit := c.audit
				if audit == 0 {
					audit = tab.audit
				}
				args := [6]uint64{c.arg0}
				if c.sys == "socket" {
					args = [6]uint64{afInet, sockDgram}
					args[0] |= path &^ 0xffffffff // the high half, which the filter ignores
				}
				got, err := vm.Run(seccompData(sysnum(t, arch, c.sys), audit, args))
				if err != nil {
					t.Fatal(err)
				}
				if uint32(got) != c.want {
					t.Errorf("got %#x, want %#x", uint32(got), c.want)
				}
			})
		}
	}
}
