package windows

import (
	"errors"
	"sync"
	"unsafe"

	xw "golang.org/x/sys/windows"

	"github.com/moat-sandbox/moat/internal/backend/windows/winapi"
)

// exemptMu serialises this process's changes of the machine's list of
// loopback-exempt AppContainers, which is read and replaced whole.
var exemptMu sync.Mutex

// loopbackExempt reads the list of AppContainers exempted from loopback
// isolation, as copies on the Go heap. The buffer Windows allocated for
// it is not freed: its documentation names no function to free it with.
func loopbackExempt() ([]*xw.SID, error) {
	var n uint32
	var arr *xw.SIDAndAttributes
	if err := winapi.NetworkIsolationGetAppContainerConfig(&n, &arr); err != nil {
		return nil, errors.New("windows: NetworkIsolationGetAppContainerConfig: " + err.Error())
	}
	var out []*xw.SID
	if n == 0 || arr == nil {
		return nil, nil
	}
	for _, sa := range unsafe.Slice(arr, n) {
		c, err := sa.Sid.Copy()
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func setLoopbackExempt(sids []*xw.SID) error {
	attrs := make([]xw.SIDAndAttributes, len(sids))
	for i, s := range sids {
		attrs[i] = xw.SIDAndAttributes{Sid: s}
	}
	var p *xw.SIDAndAttributes
	if len(attrs) > 0 {
		p = &attrs[0]
	}
	if err := winapi.NetworkIsolationSetAppContainerConfig(uint32(len(attrs)), p); err != nil {
		if errors.Is(err, xw.ERROR_ACCESS_DENIED) {
			return errors.New("windows: a loopback exemption for the policy proxy needs an administrator: " + err.Error())
		}
		return errors.New("windows: NetworkIsolationSetAppContainerConfig: " + err.Error())
	}
	return nil
}

// addLoopbackExemption lets the container reach the host's loopback,
// where the policy proxy listens.
func addLoopbackExemption(sid *xw.SID) error {
	exemptMu.Lock()
	defer exemptMu.Unlock()
	list, err := loopbackExempt()
	if err != nil {
		return err
	}
	for _, s := range list {
		if s.Equals(sid) {
			return nil
		}
	}
	return setLoopbackExempt(append(list, sid))
}

// removeLoopbackExemption takes the container off the list again.
func removeLoopbackExemption(sid *xw.SID) error {
	exemptMu.Lock()
	defer exemptMu.Unlock()
	list, err := loopbackExempt()
	if err != nil {
		return err
	}
	keep := list[:0]
	for _, s := range list {
		if !s.Equals(sid) {
			keep = append(keep, s)
		}
	}
	if len(keep) == len(list) {
		return nil
	}
	return setLoopbackExempt(keep)
}
