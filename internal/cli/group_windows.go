package cli

import "os"

// signalGroup sends s to p; Windows has no process groups to signal.
func signalGroup(p *os.Process, s os.Signal) error { return p.Signal(s) }
