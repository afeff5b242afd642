package moat

import "time"

// diskLimit returns the bytes the working directory's file system may lose
// while a command runs: the configured value, or half the space free now.
func (s *Sandbox) diskLimit() int64 {
	switch v := s.cfg.Limits.DiskBytes; {
	case v > 0:
		return v
	case v == 0:
		return 0
	}
	free, err := freeBytes(s.workDir)
	if err != nil {
		return 0
	}
	return free / 2
}

// watchDisk polls free space on the working directory's file system and
// calls kill once the command has consumed more than the limit. RLIMIT_FSIZE
// bounds one file; this bounds many. It returns a function that stops it.
func (s *Sandbox) watchDisk(kill func()) (stop func()) {
	limit := s.diskLimitBytes
	if limit <= 0 {
		return func() {}
	}
	start, err := freeBytes(s.workDir)
	if err != nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(diskPollInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if free, err := freeBytes(s.workDir); err == nil && start-free > limit {
					kill()
					return
				}
			}
		}
	}()
	return func() { close(done) }
}
