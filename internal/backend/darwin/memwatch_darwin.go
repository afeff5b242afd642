package darwin

import (
	"encoding/binary"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hostSampler reads the process table through sysctl and proc_info.
type hostSampler struct{}

func (hostSampler) members(pgid int) ([]int, error) {
	procs, err := unix.SysctlKinfoProcSlice("kern.proc.pgrp", pgid)
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, len(procs))
	for _, p := range procs {
		out = append(out, int(p.Proc.P_pid))
	}
	return out, nil
}

// footprint is proc_pid_rusage(pid, RUSAGE_INFO_V0)'s ri_phys_footprint:
// the proc_info system call, PROC_INFO_CALL_PIDRUSAGE, whose struct
// rusage_info_v0 holds the footprint after a 16-byte UUID and seven
// 64-bit counters.
func (hostSampler) footprint(pid int) (uint64, error) {
	const (
		sysProcInfo         = 336
		procInfoCallRusage  = 9
		rusageInfoV0        = 0
		physFootprintOffset = 16 + 7*8
	)
	var buf [512]byte
	_, _, errno := syscall.Syscall6(sysProcInfo, procInfoCallRusage, uintptr(pid), rusageInfoV0, 0, uintptr(unsafe.Pointer(&buf[0])), 0)
	if errno != 0 {
		return 0, errno
	}
	return binary.LittleEndian.Uint64(buf[physFootprintOffset:]), nil
}

// watchMemory kills p's process group once its footprint passes limit,
// checking every memoryInterval until stop closes.
func (p *process) watchMemory(limit int64, stop <-chan struct{}) {
	t := time.NewTicker(memoryInterval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			reason, _ := overLimit(hostSampler{}, p.proc.Pid, limit)
			if reason != "" {
				p.mu.Lock()
				if !p.done {
					p.reason = reason
					_ = syscall.Kill(-p.proc.Pid, syscall.SIGKILL)
				}
				p.mu.Unlock()
				return
			}
		}
	}
}
