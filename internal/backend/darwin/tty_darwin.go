package darwin

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// terminals are the device paths of the terminals among files, which the
// profile lets the command use: only those, never the user's others.
func terminals(files []*os.File) []string {
	var rdevs []uint64
	for _, f := range files {
		if f == nil {
			continue
		}
		var st syscall.Stat_t
		if err := syscall.Fstat(int(f.Fd()), &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFCHR {
			continue
		}
		rdevs = append(rdevs, uint64(st.Rdev))
	}
	if len(rdevs) == 0 {
		return nil
	}
	ents, err := os.ReadDir("/dev")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "tty") {
			continue
		}
		p := filepath.Join("/dev", e.Name())
		var st syscall.Stat_t
		if syscall.Stat(p, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFCHR {
			continue
		}
		for _, r := range rdevs {
			if uint64(st.Rdev) == r {
				out = append(out, p)
				break
			}
		}
	}
	return out
}
