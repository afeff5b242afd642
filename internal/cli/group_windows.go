package cli

import "os"

// signalGroup sends s to p; Windows has no process groups to signal.
func signalGroup(p *os.Process, s os.Signal) error { return p.Signal(s) }

// jobSignals is empty: Windows has no job-control signals.
var jobSignals []os.Signal

// userSignals is empty: Windows has no SIGUSR1 or SIGUSR2.
var userSignals []os.Signal

func afterForward(os.Signal) {}

func forwardAs(s os.Signal) os.Signal { return s }
