package moat

// privateRoots are the per-sandbox host directories (private temp, private
// home, build scratch) that the sandbox writes besides its working
// directory and grants. They count against the disk limit and are removed
// by Close.
func (s *Sandbox) privateRoots() []string {
	if s.stateDir == "" {
		return nil
	}
	return []string{s.stateDir}
}
