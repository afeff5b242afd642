//go:build !linux

package cgroup

// unsupportedError is returned everywhere on operating systems without
// cgroups; it matches ErrUnavailable under errors.Is.
type unsupportedError struct{}

func (unsupportedError) Error() string { return "cgroup: unsupported on this OS" }
func (unsupportedError) Unwrap() error { return ErrUnavailable }

var errUnsupported error = unsupportedError{}

// Group is one sandbox's cgroup. This OS has no cgroups, so New never
// returns one; a nil or zero Group is inert.
type Group struct{}

// New always fails on this OS with an error wrapping ErrUnavailable.
func New(name string, lim Limits) (*Group, error) { return nil, errUnsupported }

// Enforced reports which limits are held: none on this OS.
func (g *Group) Enforced() map[string]string { return map[string]string{} }

// V2FD returns -1: there is no v2 group on this OS.
func (g *Group) V2FD() int { return -1 }

// Add always fails on this OS.
func (g *Group) Add(pid int) error { return errUnsupported }

// Kill always fails on this OS.
func (g *Group) Kill() error { return errUnsupported }

// Remove does nothing on this OS; it is safe on nil.
func (g *Group) Remove() error { return nil }

// Probe reports that cgroups are unsupported on this OS.
func Probe() Info { return Info{Reason: errUnsupported.Error()} }
