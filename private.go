package moat

import "path/filepath"

// privateRoots are the per-sandbox host directories (private temp, private
// home, build scratch) that the sandbox writes besides its working
// directory and grants. They count against the disk limit. Close removes
// them, except a home supplied by Config.Home, which is kept.
func (s *Sandbox) privateRoots() []string {
	var out []string
	if s.stateDir != "" {
		out = append(out, s.stateDir)
	}
	if s.homeDir != "" {
		out = append(out, s.homeDir)
	}
	return out
}

// privateTmp is the host directory that is the sandbox's /tmp (and TMPDIR);
// "" before the state directory exists.
func (s *Sandbox) privateTmp() string { return s.stateSub(stateTmpName) }

// privateVarTmp is the host directory that is the sandbox's /var/tmp.
func (s *Sandbox) privateVarTmp() string { return s.stateSub(stateVarTmpName) }

// privateHome is the sandbox's HOME, at the same path inside as on the
// host: the supplied Config.Home, or a fresh one in the state directory.
func (s *Sandbox) privateHome() string {
	if s.homeDir != "" {
		return s.homeDir
	}
	return s.stateSub(stateHomeName)
}

func (s *Sandbox) stateSub(name string) string {
	if s.stateDir == "" {
		return ""
	}
	return filepath.Join(s.stateDir, name)
}
