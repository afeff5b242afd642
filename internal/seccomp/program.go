package seccomp

import (
	"fmt"

	"golang.org/x/net/bpf"
)

// Options selects the variable parts of the program. The zero value is the
// strictest program.
type Options struct {
	// AllowInetStream permits socket(AF_INET or AF_INET6, SOCK_STREAM,
	// 0 or IPPROTO_TCP), with SOCK_NONBLOCK and SOCK_CLOEXEC allowed in the
	// type. When false (the zero value) every AF_INET and AF_INET6 socket
	// fails with EPERM.
	AllowInetStream bool
	// SuperviseSockets hands every call that can name a Unix socket's
	// address to the supervisor (SECCOMP_RET_USER_NOTIF): connect,
	// sendto with a destination address, sendmsg and sendmmsg. The
	// filter must then be installed with a listener (InstallListener).
	// When false (the zero value) those calls are allowed, MSG_FASTOPEN
	// and TCP_FASTOPEN_CONNECT aside.
	SuperviseSockets bool
	// SuperviseExec hands execve and execveat to the supervisor, which
	// only observes them: it answers each with
	// SECCOMP_USER_NOTIF_FLAG_CONTINUE, and the kernel (Landlock, noexec
	// mounts) decides as it would without the filter. When false (the
	// zero value) both are allowed without a notification.
	SuperviseExec bool
	// NotifyRefusedSockets hands socket and socketpair calls that the
	// policy refuses to the supervisor instead of failing them in the
	// filter, so that it can record them; the supervisor must fail them
	// with EPERM, as the filter would. When false (the zero value) they
	// fail with EPERM in the filter.
	NotifyRefusedSockets bool
}

// supervises reports whether the program hands any call to the
// supervisor, and so must be installed with a listener.
func (o Options) supervises() bool {
	return o.SuperviseSockets || o.SuperviseExec || o.NotifyRefusedSockets
}

// maxInsns is BPF_MAXINSNS, the kernel's limit on a classic BPF program.
const maxInsns = 4096

// Build returns the seccomp-BPF program for arch with opts. It fails only
// for an unsupported arch (the zero Arch included). The result runs on a
// kernel of the target architecture, whatever the host.
func Build(arch Arch, opts Options) ([]bpf.Instruction, error) {
	t, err := arch.table()
	if err != nil {
		return nil, err
	}
	var a asm

	a.load(offArch)
	a.jump(bpf.JumpEqual, t.audit, "arch-ok", "")
	a.ret(retKillProcess)
	a.label("arch-ok")

	a.load(offNr)
	if t.x32 {
		a.jump(bpf.JumpGreaterOrEqual, x32SyscallBit, toENOSYS, "")
	}

	// Dispatch: one comparison per rule, then the default.
	var checks []rule
	for _, r := range rules {
		if r.only != nil && !r.only(opts) {
			continue
		}
		nr, ok := t.nr[r.name]
		if !ok {
			if t.absent[r.name] {
				continue
			}
			return nil, fmt.Errorf("seccomp: arch %s: no syscall number for %q", arch, r.name)
		}
		target := r.verdict
		if r.check != nil {
			target = "check:" + r.name
			checks = append(checks, r)
		}
		a.jump(bpf.JumpEqual, nr, target, "")
	}
	a.ret(retAllow)

	for _, r := range checks {
		a.label("check:" + r.name)
		r.check(&a, opts)
	}

	if opts.supervises() {
		a.label(toNotify)
		a.ret(retUserNotif)
	}
	a.label(toENOSYS)
	a.ret(retErrno | errnoENOSYS)
	a.label(toEOPNOTSUPP)
	a.ret(retErrno | errnoEOPNOTSUPP)
	a.label(toEPERM)
	a.ret(retErrno | errnoEPERM)
	a.label(toAllow)
	a.ret(retAllow)

	prog, err := a.finish()
	if err != nil {
		return nil, err
	}
	if len(prog) > maxInsns {
		return nil, fmt.Errorf("seccomp: program: %d instructions, more than the kernel's %d", len(prog), maxInsns)
	}
	return prog, nil
}

// assemble is Build followed by bpf.Assemble. Its raw instructions have the
// layout of the kernel's struct sock_filter.
func assemble(arch Arch, opts Options) ([]bpf.RawInstruction, error) {
	prog, err := Build(arch, opts)
	if err != nil {
		return nil, err
	}
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return nil, fmt.Errorf("seccomp: assemble: %w", err)
	}
	return raw, nil
}
