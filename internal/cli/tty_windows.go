package cli

// withoutTTOU runs f: Windows has no SIGTTOU.
func withoutTTOU(f func()) { f() }
