package moat

// DisableNamespaces makes s run the way it would on a host without user
// namespaces, so tests can attack that path too.
func DisableNamespaces(s *Sandbox) { s.engine.(*linuxEngine).e.DisableNamespaces() }
