package linux

import (
	"os/exec"
	"runtime"
	"sync"
)

// The helper's parent-death signal fires when the *thread* that forked it
// exits. Helpers are therefore started from one OS thread that stays locked
// for the life of the process, so a sandbox never dies because some
// unrelated goroutine's locked thread ended.
var (
	spawnOnce     sync.Once
	spawnRequests chan func()
)

func startOnSpawner(proc *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawnRequests = make(chan func())
		go func() {
			runtime.LockOSThread() // never unlocked
			for f := range spawnRequests {
				f()
			}
		}()
	})
	errc := make(chan error, 1)
	spawnRequests <- func() { errc <- proc.Start() }
	return <-errc
}
