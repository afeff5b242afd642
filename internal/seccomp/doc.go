// Package seccomp generates the seccomp-BPF program that the sandbox installs
// before it executes untrusted code.
//
// The generator (Build) is pure Go with no build constraints: it produces the
// program for either supported target architecture on any host, so both
// variants are built and tested everywhere. Only the code that hands a program
// to the kernel (Assemble's conversion to unix.SockFilter, and Install) is
// Linux-only.
//
// The program, in order:
//
//  1. kills the process if seccomp_data.arch is not the target's AUDIT_ARCH
//     (i386 "int 0x80", AArch32 compat);
//  2. on amd64, fails x32 syscalls (nr >= 0x40000000) with ENOSYS;
//  3. fails clone3 with ENOSYS, so libc falls back to clone, whose flags a
//     classic BPF filter can inspect;
//  4. fails fallocate with EOPNOTSUPP, so that disk space is reserved only
//     by writing (see policy.go);
//  5. fails a fixed list of dangerous syscalls with EPERM (see policy.go);
//  6. checks the arguments of clone, unshare, ioctl, socket, socketpair,
//     sendto, sendmsg, sendmmsg and setsockopt (see checks.go);
//  7. with Options.SuperviseSockets, returns SECCOMP_RET_USER_NOTIF for
//     connect, sendto with a destination address, sendmsg and sendmmsg, so
//     that a supervisor holding the listener (InstallListener) decides them;
//  8. allows everything else.
//
// Argument checks compare only the low 32 bits of an argument: every checked
// argument is an int or unsigned int (or, for clone, truncated with
// lower_32_bits) in the kernel, so the high word cannot change the kernel's
// reading of it and must not change the filter's either.
package seccomp
