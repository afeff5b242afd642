//go:build !linux

package moat

// filesystemPolicyEnforced says that this platform's backend enforces
// Deny, ReadOnly, Seal, VirtualFiles, HideProc and HostNetwork. Not yet
// here: New refuses them (filesystem_policy.go).
const filesystemPolicyEnforced = false
