//go:build !windows

package moat

// checkDiskPlatform passes: the disk watch samples statfs here.
func checkDiskPlatform(Limits) error { return nil }
