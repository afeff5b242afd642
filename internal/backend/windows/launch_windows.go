package windows

import (
	"errors"
	"os"
	"sync"
	"unsafe"

	xw "golang.org/x/sys/windows"

	"github.com/moat-sandbox/moat/internal/spec"
)

// Process-creation values that golang.org/x/sys/windows does not name.
const (
	// procThreadAttributeSecurityCapabilities is
	// PROC_THREAD_ATTRIBUTE_SECURITY_CAPABILITIES: the process runs in
	// the AppContainer named by a SECURITY_CAPABILITIES.
	procThreadAttributeSecurityCapabilities = 0x00020009
)

// securityCapabilities is SECURITY_CAPABILITIES.
type securityCapabilities struct {
	AppContainerSid *xw.SID
	Capabilities    *xw.SIDAndAttributes
	CapabilityCount uint32
	Reserved        uint32
}

// startError is the spec.StartError for a failed CreateProcess: 127 for a
// program not found, 126 for one that may not or cannot run, else 125.
func startError(path string, err error) error {
	code := 125
	switch {
	case errors.Is(err, xw.ERROR_FILE_NOT_FOUND), errors.Is(err, xw.ERROR_PATH_NOT_FOUND):
		code = 127
	case errors.Is(err, xw.ERROR_ACCESS_DENIED), errors.Is(err, xw.ERROR_BAD_EXE_FORMAT), errors.Is(err, xw.ERROR_ELEVATION_REQUIRED):
		code = 126
	}
	return &spec.StartError{Code: code, Msg: "" + path + ": " + err.Error()}
}

// inheritable duplicates f's handle as an inheritable one, which the
// caller closes; nil becomes the NUL device.
func inheritable(f *os.File, write bool) (xw.Handle, error) {
	var src xw.Handle
	if f != nil {
		src = xw.Handle(f.Fd())
	} else {
		name, _ := xw.UTF16PtrFromString("NUL")
		access := uint32(xw.GENERIC_READ)
		if write {
			access = xw.GENERIC_WRITE
		}
		sa := &xw.SecurityAttributes{InheritHandle: 1}
		sa.Length = uint32(unsafe.Sizeof(*sa))
		return xw.CreateFile(name, access, xw.FILE_SHARE_READ|xw.FILE_SHARE_WRITE, sa, xw.OPEN_EXISTING, 0, 0)
	}
	cur := xw.CurrentProcess()
	var dup xw.Handle
	if err := xw.DuplicateHandle(cur, src, cur, &dup, 0, true, xw.DUPLICATE_SAME_ACCESS); err != nil {
		return 0, err
	}
	return dup, nil
}

// launch creates c's process suspended in the container, puts it in the
// sandbox's job and in a job of its own nested in it (so that its tree
// can be ended alone), and resumes it. Only the three standard handles
// are inherited (PROC_THREAD_ATTRIBUTE_HANDLE_LIST).
func (e *Engine) launch(c *spec.Command, files []*os.File) (*process, error) {
	if len(files) > 3 {
		return nil, &spec.StartError{Code: 125, Msg: "windows: only standard input, output and error can be passed to a command"}
	}
	if c.Pty {
		return nil, &spec.StartError{Code: 125, Msg: "windows: no pseudo-terminal in an AppContainer yet"}
	}
	args := c.Args
	if len(args) == 0 {
		args = []string{c.Path}
	}
	if err := CheckBatchArgs(c.Path, args); err != nil {
		return nil, &spec.StartError{Code: 125, Msg: err.Error()}
	}
	line, err := ComposeCommandLine(args)
	if err != nil {
		return nil, &spec.StartError{Code: 125, Msg: err.Error()}
	}
	block, err := EnvBlock(ContainerEnv(c.Env, e.policy.Private.Tmp, e.temp, os.LookupEnv))
	if err != nil {
		return nil, &spec.StartError{Code: 125, Msg: err.Error()}
	}
	var std [3]xw.Handle
	for i := range std {
		var f *os.File
		if i < len(files) {
			f = files[i]
		}
		h, err := inheritable(f, i > 0)
		if err != nil {
			for _, o := range std[:i] {
				xw.CloseHandle(o)
			}
			return nil, &spec.StartError{Code: 125, Msg: "windows: standard handle: " + err.Error()}
		}
		std[i] = h
	}
	defer func() {
		for _, h := range std {
			xw.CloseHandle(h)
		}
	}()
	// Each is a duplicate of its own, so none is listed twice, which
	// UpdateProcThreadAttribute would refuse.
	list := std[:]
	al, err := xw.NewProcThreadAttributeList(3)
	if err != nil {
		return nil, &spec.StartError{Code: 125, Msg: "windows: attribute list: " + err.Error()}
	}
	defer al.Delete()
	sc := securityCapabilities{AppContainerSid: e.c.sid, CapabilityCount: uint32(len(e.c.caps))}
	if len(e.c.caps) > 0 {
		sc.Capabilities = &e.c.caps[0]
	}
	mitigation := MitigationPolicy(&e.policy)
	for _, a := range []struct {
		attr uintptr
		val  unsafe.Pointer
		size uintptr
	}{
		{procThreadAttributeSecurityCapabilities, unsafe.Pointer(&sc), unsafe.Sizeof(sc)},
		{xw.PROC_THREAD_ATTRIBUTE_HANDLE_LIST, unsafe.Pointer(&list[0]), uintptr(len(list)) * unsafe.Sizeof(list[0])},
		{xw.PROC_THREAD_ATTRIBUTE_MITIGATION_POLICY, unsafe.Pointer(&mitigation), unsafe.Sizeof(mitigation)},
	} {
		if err := al.Update(a.attr, a.val, a.size); err != nil {
			return nil, &spec.StartError{Code: 125, Msg: "windows: UpdateProcThreadAttribute: " + err.Error()}
		}
	}
	si := &xw.StartupInfoEx{ProcThreadAttributeList: al.List()}
	si.Cb = uint32(unsafe.Sizeof(*si))
	si.Flags = xw.STARTF_USESTDHANDLES
	si.StdInput, si.StdOutput, si.StdErr = std[0], std[1], std[2]
	app, err := xw.UTF16PtrFromString(c.Path)
	if err != nil {
		return nil, &spec.StartError{Code: 125, Msg: "windows: program path: " + err.Error()}
	}
	cmdline, err := xw.UTF16FromString(line)
	if err != nil {
		return nil, &spec.StartError{Code: 125, Msg: "windows: command line: " + err.Error()}
	}
	var dir *uint16
	if c.Dir != "" {
		if dir, err = xw.UTF16PtrFromString(c.Dir); err != nil {
			return nil, &spec.StartError{Code: 125, Msg: "windows: directory: " + err.Error()}
		}
	}
	flags := uint32(xw.CREATE_SUSPENDED | xw.CREATE_UNICODE_ENVIRONMENT | xw.EXTENDED_STARTUPINFO_PRESENT | xw.CREATE_NEW_PROCESS_GROUP)
	var pi xw.ProcessInformation
	if err := xw.CreateProcess(app, &cmdline[0], nil, nil, true, flags, &block[0], dir, &si.StartupInfo, &pi); err != nil {
		return nil, startError(c.Path, err)
	}
	defer xw.CloseHandle(pi.Thread)
	defer xw.CloseHandle(pi.Process)
	fail := func(what string, err error) (*process, error) {
		_ = xw.TerminateProcess(pi.Process, 1)
		return nil, &spec.StartError{Code: 125, Msg: "windows: " + what + ": " + err.Error()}
	}
	cmdJob, _, err := newJob(JobLimits{Flags: limitKillOnJobClose})
	if err != nil {
		return fail("command job", err)
	}
	if err := xw.AssignProcessToJobObject(e.job, pi.Process); err != nil {
		xw.CloseHandle(cmdJob)
		return fail("AssignProcessToJobObject (sandbox)", err)
	}
	if err := xw.AssignProcessToJobObject(cmdJob, pi.Process); err != nil {
		xw.CloseHandle(cmdJob)
		return fail("AssignProcessToJobObject (command)", err)
	}
	proc, err := os.FindProcess(int(pi.ProcessId))
	if err != nil {
		xw.CloseHandle(cmdJob)
		return fail("FindProcess", err)
	}
	if _, err := xw.ResumeThread(pi.Thread); err != nil {
		_ = proc.Release()
		xw.CloseHandle(cmdJob)
		return fail("ResumeThread", err)
	}
	return &process{p: proc, job: cmdJob}, nil
}

// process is one started command: its process and the job that holds its
// tree.
type process struct {
	p *os.Process

	mu  sync.Mutex
	job xw.Handle // 0 once closed
}

// Process is the command's process.
func (p *process) Process() *os.Process { return p.p }

// Wait waits for the command, then ends what is left of its tree.
func (p *process) Wait() (*os.ProcessState, error) {
	st, err := p.p.Wait()
	p.endTree(true)
	return st, err
}

// Kill ends the command's tree.
func (p *process) Kill() { p.endTree(false) }

func (p *process) endTree(release bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.job == 0 {
		return
	}
	_ = xw.TerminateJobObject(p.job, 1)
	if release {
		xw.CloseHandle(p.job)
		p.job = 0
	}
}

// Reason is empty: the job's limits are enforced by Windows itself.
func (p *process) Reason() string { return "" }
