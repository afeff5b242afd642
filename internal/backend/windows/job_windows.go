package windows

import (
	"errors"
	"unsafe"

	xw "golang.org/x/sys/windows"
)

// newJob creates a job object with limits l. uiRestricted says whether
// the UI restrictions took (a job nested in one of the host's may refuse
// them); any other failure is an error.
func newJob(l JobLimits) (h xw.Handle, uiRestricted bool, err error) {
	h, err = xw.CreateJobObject(nil, nil)
	if err != nil {
		return 0, false, errors.New("windows: CreateJobObject: " + err.Error())
	}
	var info xw.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	b := &info.BasicLimitInformation
	b.LimitFlags = l.Flags
	b.ActiveProcessLimit = l.ActiveProcesses
	b.PerProcessUserTimeLimit = l.PerProcessUserTime
	b.PriorityClass = l.PriorityClass
	info.JobMemoryLimit = clampUintptr(l.JobMemory)
	info.ProcessMemoryLimit = clampUintptr(l.ProcessMemory)
	if _, err := xw.SetInformationJobObject(h, xw.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		xw.CloseHandle(h)
		return 0, false, errors.New("windows: job limits: " + err.Error())
	}
	if l.UIRestrictions != 0 {
		ui := xw.JOBOBJECT_BASIC_UI_RESTRICTIONS{UIRestrictionsClass: l.UIRestrictions}
		_, err := xw.SetInformationJobObject(h, xw.JobObjectBasicUIRestrictions,
			uintptr(unsafe.Pointer(&ui)), uint32(unsafe.Sizeof(ui)))
		uiRestricted = err == nil
	}
	return h, uiRestricted, nil
}

func clampUintptr(v uint64) uintptr {
	if uint64(^uintptr(0)) < v {
		return ^uintptr(0)
	}
	return uintptr(v)
}
