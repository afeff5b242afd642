package cli

// onResize does nothing: Windows has no SIGWINCH.
func onResize(func()) (stop func()) { return func() {} }
