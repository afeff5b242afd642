package moat

import (
	"path/filepath"
	"syscall"

	"github.com/moat-sandbox/moat/internal/backend/linux"
)

// socketGrants checks Config.Sockets: each path absolute and clean, with
// no link on the way (judged like a grant), naming an existing socket
// file, whose identity the sandbox must then find.
func socketGrants(paths []string) ([]linux.Grant, error) {
	var out []linux.Grant
	seen := map[string]bool{}
	for _, p := range paths {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			return nil, errorf("socket %q: path must be absolute and clean", p)
		}
		if seen[p] {
			continue
		}
		seen[p] = true
		if err := checkNoLinks(p); err != nil {
			return nil, err
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			return nil, errorf("socket %q: %v", p, err)
		}
		if st.Mode&syscall.S_IFMT != syscall.S_IFSOCK {
			return nil, errorf("socket %q: not a Unix socket", p)
		}
		out = append(out, linux.Grant{Path: p, Dev: uint64(st.Dev), Ino: st.Ino})
	}
	return out, nil
}

// socketRefusals records the host sockets the sandbox was refused.
func (l *linuxEngine) socketRefusals() {
	for _, p := range l.e.SocketRefusals() {
		l.sb.addRefusal(Refusal{
			Kind:    "socket",
			Subject: p,
			Detail:  "a host Unix socket; connecting to it is refused",
			Allow:   "--allow-socket PATH, Config.Sockets",
		})
	}
}
