package darwin

import (
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// HelperMain runs the helper role that HelperEnv's value names; it never
// returns.
func HelperMain(role string) {
	kind, arg, _ := strings.Cut(role, ":")
	n, err := strconv.Atoi(arg)
	if err != nil {
		os.Exit(125)
	}
	switch kind {
	case "run":
		runHelper(n)
	case "watch":
		watchStart(n)
	case "watch2":
		watch(n)
	}
	os.Exit(125)
}

// runHelper sets the limits, starts the watcher and executes the command.
// It runs inside the sandbox, as sandbox-exec's command; base is the
// descriptor of the command pipe, followed by the status pipe and the
// lifeline.
func runHelper(base int) {
	specFile := os.NewFile(uintptr(base), "spec")
	statusFile := os.NewFile(uintptr(base+1), "status")
	fail := func(code int, msg string) {
		if statusFile != nil {
			_, _ = statusFile.Write(formatStatus(code, msg))
		}
		os.Exit(code)
	}
	if specFile == nil || statusFile == nil {
		os.Exit(125)
	}
	b, err := io.ReadAll(io.LimitReader(specFile, 64<<20))
	specFile.Close()
	if err != nil {
		fail(125, "sandbox helper: "+err.Error())
	}
	hs, err := decodeSpec(b)
	if err != nil {
		fail(125, "sandbox helper: "+err.Error())
	}
	if _, err := statusFile.Write([]byte{readyByte}); err != nil {
		os.Exit(125)
	}
	for _, rl := range hs.Rlimits {
		if err := setRlimit(rl); err != nil {
			fail(125, "sandbox helper: setrlimit "+strconv.Itoa(rl.Resource)+": "+err.Error())
		}
	}
	if hs.Nice > 0 {
		if err := lowerPriority(hs.Nice); err != nil {
			fail(125, "sandbox helper: setpriority: "+err.Error())
		}
	}
	if hs.IOPolicy != 0 {
		if err := setIOPolicy(hs.IOPolicy); err != nil {
			fail(125, "sandbox helper: iopolicysys: "+err.Error())
		}
	}
	// The helper's own descriptors close as the command executes; the
	// command's ExtraFiles are kept from the watcher, then given back.
	for fd := 3; fd < base+3; fd++ {
		syscall.CloseOnExec(fd)
	}
	if hs.Watch {
		if err := startWatcher(base + 2); err != nil {
			fail(125, "sandbox helper: watcher: "+err.Error())
		}
	}
	for fd := 3; fd < 3+hs.Keep; fd++ {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil {
			fail(125, "sandbox helper: descriptor "+strconv.Itoa(fd)+": "+err.Error())
		}
	}
	// The marker never reaches the command: a Go program importing moat
	// would take it for its own helper role.
	env := make([]string, 0, len(hs.Env))
	for _, kv := range hs.Env {
		if !strings.HasPrefix(kv, HelperEnv+"=") {
			env = append(env, kv)
		}
	}
	err = syscall.Exec(hs.Path, hs.Args, env)
	code := 126
	if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) {
		code = 127
	}
	fail(code, ""+hs.Path+": "+err.Error())
}

// setRlimit lowers one limit, never raising the hard limit above what
// the process already has.
func setRlimit(rl rlimit) error {
	var cur syscall.Rlimit
	if err := syscall.Getrlimit(rl.Resource, &cur); err != nil {
		return err
	}
	soft, hard := rl.Soft, rl.Hard
	if hard == 0 {
		hard = soft
	}
	hard = min(hard, cur.Max)
	soft = min(soft, hard)
	// syscall's own Setrlimit, so that the runtime's saved open-files
	// limit is not restored at exec.
	return syscall.Setrlimit(rl.Resource, &syscall.Rlimit{Cur: soft, Max: hard})
}

// lowerPriority lowers the CPU priority by steps, capped at the lowest.
func lowerPriority(steps int) error {
	cur, err := unix.Getpriority(unix.PRIO_PROCESS, 0)
	if err != nil {
		return err
	}
	return unix.Setpriority(unix.PRIO_PROCESS, 0, min(cur+steps, 20))
}

// setIOPolicy sets the process's disk I/O policy, as setiopolicy_np
// (IOPOL_TYPE_DISK, IOPOL_SCOPE_PROCESS, policy) does: one iopolicysys
// call, inherited by every child.
func setIOPolicy(policy int) error {
	const (
		iopolCmdSet       = 1
		iopolTypeDisk     = 0
		iopolScopeProcess = 0
	)
	param := struct{ scope, iotype, policy int32 }{iopolScopeProcess, iopolTypeDisk, int32(policy)}
	_, _, errno := syscall.Syscall(unix.SYS_IOPOLICYSYS, iopolCmdSet, uintptr(unsafe.Pointer(&param)), 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// startWatcher starts the watcher's first step, which starts the second
// and exits at once, so the watcher is no child of the command. Both get
// the lifeline as descriptor 3 and nothing else.
func startWatcher(lifeline int) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		return err
	}
	defer null.Close()
	life := os.NewFile(uintptr(lifeline), "lifeline")
	p, err := os.StartProcess(self, []string{self, helperArg}, &os.ProcAttr{
		Env:   []string{HelperEnv + "=watch:" + strconv.Itoa(os.Getpid())},
		Files: []*os.File{null, null, null, life},
	})
	if err != nil {
		return err
	}
	st, err := p.Wait()
	if err != nil {
		return err
	}
	if !st.Success() {
		return errors.New("first step " + st.String())
	}
	return nil
}

// watchStart is the watcher's first step: start the second in a session
// of its own and exit.
func watchStart(pgid int) {
	self, err := os.Executable()
	if err != nil {
		os.Exit(1)
	}
	_, err = os.StartProcess(self, []string{self, helperArg}, &os.ProcAttr{
		Env:   []string{HelperEnv + "=watch2:" + strconv.Itoa(pgid)},
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr, os.NewFile(3, "lifeline")},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

// watch kills process group pgid once the lifeline closes (moat exited,
// however, or closed the sandbox), and exits once the group is gone.
func watch(pgid int) {
	life := os.NewFile(3, "lifeline")
	gone := make(chan struct{})
	go func() {
		var b [1]byte
		for {
			if _, err := life.Read(b[:]); err != nil {
				close(gone)
				return
			}
		}
	}()
	tick := time.NewTicker(500 * time.Millisecond)
	for {
		select {
		case <-gone:
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			os.Exit(0)
		case <-tick.C:
			if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
				os.Exit(0)
			}
		}
	}
}
