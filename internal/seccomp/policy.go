package seccomp

// Shared return labels, placed at the end of the program.
const (
	toAllow      = "allow"
	toEPERM      = "eperm"
	toENOSYS     = "enosys"
	toEOPNOTSUPP = "eopnotsupp"
	toNotify     = "notify"
)

// A rule decides one syscall: either it jumps straight to a shared return
// (verdict), or, when check is set, to an argument-checking block that ends
// in a jump to a shared return.
type rule struct {
	name    string
	verdict string
	check   func(a *asm, opts Options)
	// only, when set, leaves the rule out of programs whose options it
	// rejects: the syscall is then allowed, at no cost to the others.
	only func(opts Options) bool
}

// rules is the policy, in dispatch order. Syscalls not listed are allowed.
// A name missing from an architecture's table must be in its absent set.
var rules = []rule{
	// clone3's flags sit in a struct a classic BPF filter cannot read;
	// ENOSYS makes libc fall back to clone, which we can check.
	{name: "clone3", verdict: toENOSYS},

	{name: "clone", check: checkClone},
	{name: "unshare", check: checkUnshare},
	{name: "ioctl", check: checkIoctl},
	{name: "socket", check: checkSocket},
	{name: "socketpair", check: checkSocketpair},
	{name: "connect", check: checkConnect},
	{name: "sendto", check: checkSendto},
	{name: "sendmsg", check: checkSendFlags(2)},
	{name: "sendmmsg", check: checkSendFlags(3)},
	{name: "setsockopt", check: checkSetsockopt},
	// The supervisor only watches these (SuperviseExec): it records an
	// exec that write-xor-execute refuses and lets the kernel decide.
	{name: "execve", verdict: toNotify, only: superviseExec},
	{name: "execveat", verdict: toNotify, only: superviseExec},
	// And the checks that ask whether a file may be executed (X_OK), as
	// make and other tools do before they exec: the answer is the
	// kernel's, but a refusal would go unreported.
	{name: "access", check: checkAccessExec(1), only: superviseExec},
	{name: "faccessat", check: checkAccessExec(2), only: superviseExec},
	{name: "faccessat2", check: checkAccessExec(2), only: superviseExec},
	// Memory files are files the sandbox writes and could then run
	// (fexecve, or mmap with PROT_EXEC, which a seal against execution does
	// not stop) where neither Landlock nor a noexec mount reaches. ENOSYS:
	// libraries take it for an old kernel and fall back to a temporary
	// file, which the sandbox cannot run.
	{name: "memfd_create", verdict: toENOSYS},
	{name: "memfd_secret", verdict: toENOSYS},
	{name: "personality", check: checkPersonality},
	// fallocate reserves disk blocks without writing them: with
	// FALLOC_FL_KEEP_SIZE past RLIMIT_FSIZE (which only counts the file's
	// size), and without it faster than the disk watch polls. Every mode
	// fails with EOPNOTSUPP, what a file system without it says: glibc's
	// posix_fallocate and Go's linker then write, which the file-size limit
	// and the disk watch see. Always, not only under a disk limit: the
	// file-size limit is always set, and one program for every sandbox
	// keeps the start path as it is.
	{name: "fallocate", verdict: toEOPNOTSUPP},

	// Debugging and reading or writing other processes.
	{name: "ptrace", verdict: toEPERM},
	{name: "process_vm_readv", verdict: toEPERM},
	{name: "process_vm_writev", verdict: toEPERM},
	{name: "pidfd_getfd", verdict: toEPERM},
	{name: "perf_event_open", verdict: toEPERM},

	// Kernel keyrings.
	{name: "keyctl", verdict: toEPERM},
	{name: "add_key", verdict: toEPERM},
	{name: "request_key", verdict: toEPERM},

	// Large kernel attack surface.
	{name: "bpf", verdict: toEPERM},
	{name: "userfaultfd", verdict: toEPERM},
	{name: "io_uring_setup", verdict: toEPERM},
	{name: "io_uring_enter", verdict: toEPERM},
	{name: "io_uring_register", verdict: toEPERM},

	// Mounts and filesystem views.
	{name: "mount", verdict: toEPERM},
	{name: "umount2", verdict: toEPERM},
	{name: "pivot_root", verdict: toEPERM},
	{name: "chroot", verdict: toEPERM},
	{name: "setns", verdict: toEPERM},
	{name: "fsopen", verdict: toEPERM},
	{name: "fsconfig", verdict: toEPERM},
	{name: "fsmount", verdict: toEPERM},
	{name: "fspick", verdict: toEPERM},
	{name: "move_mount", verdict: toEPERM},
	{name: "open_tree", verdict: toEPERM},
	{name: "open_tree_attr", verdict: toEPERM},
	{name: "mount_setattr", verdict: toEPERM},
	{name: "open_by_handle_at", verdict: toEPERM},
	{name: "name_to_handle_at", verdict: toEPERM},
	{name: "fanotify_init", verdict: toEPERM},
	{name: "quotactl", verdict: toEPERM},
	{name: "quotactl_fd", verdict: toEPERM},
	{name: "lookup_dcookie", verdict: toEPERM},

	// Kernel code, the machine, and global state.
	{name: "kexec_load", verdict: toEPERM},
	{name: "kexec_file_load", verdict: toEPERM},
	{name: "init_module", verdict: toEPERM},
	{name: "finit_module", verdict: toEPERM},
	{name: "delete_module", verdict: toEPERM},
	{name: "reboot", verdict: toEPERM},
	{name: "swapon", verdict: toEPERM},
	{name: "swapoff", verdict: toEPERM},
	{name: "acct", verdict: toEPERM},
	{name: "syslog", verdict: toEPERM},
	{name: "vhangup", verdict: toEPERM},
	{name: "settimeofday", verdict: toEPERM},
	{name: "clock_settime", verdict: toEPERM},
	{name: "clock_adjtime", verdict: toEPERM},
	{name: "adjtimex", verdict: toEPERM},

	// x86 only: port I/O and a.out libraries.
	{name: "iopl", verdict: toEPERM},
	{name: "ioperm", verdict: toEPERM},
	{name: "uselib", verdict: toEPERM},
	// x86 only: custom segments, a long line of kernel bugs and no use to
	// ordinary programs (Docker refuses it too).
	{name: "modify_ldt", verdict: toEPERM},
}

// superviseExec selects the exec rules.
func superviseExec(opts Options) bool { return opts.SuperviseExec }
