//go:build !linux

package venv

import "os/exec"

// hostProcess leaves cmd as it is: cancelling the context kills the tool
// itself; there is no parent-death signal to ask for.
func hostProcess(cmd *exec.Cmd) {}
