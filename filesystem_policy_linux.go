package moat

// filesystemPolicyEnforced says that this platform's backend enforces
// Deny, ReadOnly, Seal, VirtualFiles, HideProc and HostNetwork.
const filesystemPolicyEnforced = true
