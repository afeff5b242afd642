package statedir

import (
	"path/filepath"
	"strconv"
)

// ServeRuntimeDirs lists the directories where "moat serve" may put its
// default socket: $XDG_RUNTIME_DIR/moat (when xdgRuntimeDir is absolute)
// and /run/user/UID/moat, each once. No sandbox may see them: one that
// could write there could move the server's socket aside and listen in its
// place, and take the bearer token a client sends.
func ServeRuntimeDirs(xdgRuntimeDir string, uid int) []string {
	var out []string
	if filepath.IsAbs(xdgRuntimeDir) {
		out = append(out, filepath.Join(filepath.Clean(xdgRuntimeDir), "moat"))
	}
	if run := filepath.Join("/run/user", strconv.Itoa(uid), "moat"); len(out) == 0 || out[0] != run {
		out = append(out, run)
	}
	return out
}
