package windows

import (
	"errors"
	"unsafe"

	xw "golang.org/x/sys/windows"

	"github.com/moat-sandbox/moat/internal/aclplan"
	"github.com/moat-sandbox/moat/internal/backend/windows/winapi"
)

// aclHeader is the layout of an ACL's header, whose count of entries
// golang.org/x/sys/windows does not export.
type aclHeader struct {
	revision, sbz1 byte
	size, aceCount uint16
	sbz2           uint16
}

const (
	aceAllowed = 0 // ACCESS_ALLOWED_ACE_TYPE
	aceDenied  = 1 // ACCESS_DENIED_ACE_TYPE
)

// aceFlags are the inheritance flags of a scope.
func aceFlags(in aclplan.Inherit) uint32 {
	switch in {
	case aclplan.Subdirs:
		return xw.CONTAINER_INHERIT_ACE | xw.INHERIT_ONLY_ACE
	case aclplan.Files:
		return xw.OBJECT_INHERIT_ACE | xw.INHERIT_ONLY_ACE
	case aclplan.Tree:
		return xw.CONTAINER_INHERIT_ACE | xw.OBJECT_INHERIT_ACE
	}
	return xw.NO_INHERITANCE
}

// byPath groups the plan's entries by object, in the plan's order.
func byPath(p aclplan.Plan) (paths []string, entries map[string][]aclplan.Entry) {
	entries = map[string][]aclplan.Entry{}
	for _, e := range p.Entries {
		k := aclplan.Key(e.Path)
		if _, ok := entries[k]; !ok {
			paths = append(paths, e.Path)
		}
		entries[k] = append(entries[k], e)
	}
	return paths, entries
}

// applyPlan adds the plan's entries for sid, one object at a time
// (SetNamedSecurityInfo carries the inheritable ones to what exists below
// it), then reads each access list back and checks that every entry is
// there as planned, with its own mask and flags: the sandbox does not
// start on an access list that differs from its plan. On failure what
// was added is revoked.
func applyPlan(p aclplan.Plan, sid *xw.SID) (err error) {
	paths, entries := byPath(p)
	defer func() {
		if err != nil {
			_ = revokePlan(p, sid)
		}
	}()
	for _, path := range paths {
		var ea []xw.EXPLICIT_ACCESS
		for _, e := range entries[aclplan.Key(path)] {
			mode := xw.ACCESS_MODE(xw.GRANT_ACCESS)
			if e.Access == aclplan.Deny {
				mode = xw.DENY_ACCESS
			}
			ea = append(ea, xw.EXPLICIT_ACCESS{
				AccessPermissions: xw.ACCESS_MASK(e.Mask),
				AccessMode:        mode,
				Inheritance:       aceFlags(e.Inherit),
				Trustee: xw.TRUSTEE{
					TrusteeForm:  xw.TRUSTEE_IS_SID,
					TrusteeType:  xw.TRUSTEE_IS_UNKNOWN,
					TrusteeValue: xw.TrusteeValueFromSID(sid),
				},
			})
		}
		apply := aclplan.Extended(path)
		sd, err := xw.GetNamedSecurityInfo(apply, xw.SE_FILE_OBJECT, xw.DACL_SECURITY_INFORMATION)
		if err != nil {
			return aclError(path, "GetNamedSecurityInfo", err)
		}
		dacl, _, err := sd.DACL()
		if err != nil {
			return aclError(path, "DACL", err)
		}
		acl, err := xw.ACLFromEntries(ea, dacl)
		if err != nil {
			return aclError(path, "SetEntriesInAcl", err)
		}
		if err := xw.SetNamedSecurityInfo(apply, xw.SE_FILE_OBJECT, xw.DACL_SECURITY_INFORMATION, nil, nil, acl, nil); err != nil {
			return aclError(path, "SetNamedSecurityInfo", err)
		}
		if err := checkApplied(path, entries[aclplan.Key(path)], sid); err != nil {
			return err
		}
	}
	return nil
}

func aclError(path, call string, err error) error {
	return errors.New("windows: access list of " + strconvQuote(path) + ": " + call + ": " + err.Error())
}

// ownEntry is one explicit entry for the container's SID in an ACL.
type ownEntry struct {
	index      uint32
	typ, flags uint8
	mask       uint32
}

// ownEntries lists the explicit (not inherited) allow and deny entries of
// acl whose SID is sid.
func ownEntries(acl *xw.ACL, sid *xw.SID) ([]ownEntry, error) {
	if acl == nil {
		return nil, nil
	}
	h := (*aclHeader)(unsafe.Pointer(acl))
	var out []ownEntry
	for i := uint32(0); i < uint32(h.aceCount); i++ {
		var ace *xw.ACCESS_ALLOWED_ACE
		if err := xw.GetAce(acl, i, &ace); err != nil {
			return nil, err
		}
		if ace.Header.AceType != aceAllowed && ace.Header.AceType != aceDenied {
			continue
		}
		if ace.Header.AceFlags&xw.INHERITED_ACE != 0 {
			continue
		}
		aceSid := (*xw.SID)(unsafe.Pointer(&ace.SidStart))
		if !xw.EqualSid(aceSid, sid) {
			continue
		}
		out = append(out, ownEntry{index: i, typ: ace.Header.AceType, flags: ace.Header.AceFlags, mask: uint32(ace.Mask)})
	}
	return out, nil
}

// checkApplied reads path's access list and checks that each planned
// entry is one explicit entry of it, with exactly its mask and flags.
func checkApplied(path string, want []aclplan.Entry, sid *xw.SID) error {
	sd, err := xw.GetNamedSecurityInfo(aclplan.Extended(path), xw.SE_FILE_OBJECT, xw.DACL_SECURITY_INFORMATION)
	if err != nil {
		return aclError(path, "GetNamedSecurityInfo", err)
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		return aclError(path, "DACL", err)
	}
	have, err := ownEntries(dacl, sid)
	if err != nil {
		return aclError(path, "GetAce", err)
	}
	for _, e := range want {
		typ := uint8(aceAllowed)
		if e.Access == aclplan.Deny {
			typ = aceDenied
		}
		found := false
		for _, h := range have {
			if h.typ == typ && uint32(h.flags)&0xf == aceFlags(e.Inherit) && h.mask == uint32(e.Mask) {
				found = true
				break
			}
		}
		if !found {
			return errors.New("windows: access list of " + strconvQuote(path) + ": entry not as planned: " + e.String())
		}
	}
	return nil
}

// revokePlan removes every explicit entry for sid from the objects the
// plan touched, children first; a path that is gone is skipped. It
// returns the first failure and goes on past it.
func revokePlan(p aclplan.Plan, sid *xw.SID) error {
	var first error
	for _, path := range p.Revoke {
		if err := revokePath(path, sid); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func revokePath(path string, sid *xw.SID) error {
	apply := aclplan.Extended(path)
	sd, err := xw.GetNamedSecurityInfo(apply, xw.SE_FILE_OBJECT, xw.DACL_SECURITY_INFORMATION)
	if errors.Is(err, xw.ERROR_FILE_NOT_FOUND) || errors.Is(err, xw.ERROR_PATH_NOT_FOUND) {
		return nil
	}
	if err != nil {
		return aclError(path, "GetNamedSecurityInfo", err)
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		return aclError(path, "DACL", err)
	}
	own, err := ownEntries(dacl, sid)
	if err != nil {
		return aclError(path, "GetAce", err)
	}
	if len(own) == 0 {
		return nil
	}
	for i := len(own) - 1; i >= 0; i-- { // highest index first
		if err := winapi.DeleteAce(dacl, own[i].index); err != nil {
			return aclError(path, "DeleteAce", err)
		}
	}
	if err := xw.SetNamedSecurityInfo(apply, xw.SE_FILE_OBJECT, xw.DACL_SECURITY_INFORMATION, nil, nil, dacl, nil); err != nil {
		return aclError(path, "SetNamedSecurityInfo", err)
	}
	return nil
}
