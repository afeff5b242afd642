//go:build !linux

package hostview

// hasACL reports no ACL: where moat cannot ask, the owner and mode checks
// stand alone (no shared-temp directory is shown outside Unix anyway).
func hasACL(string) bool { return false }
