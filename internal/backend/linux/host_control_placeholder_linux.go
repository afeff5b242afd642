package linux

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Placeholders for a repository's missing hooks/ and config. Each says
// who made it: the config placeholder is one comment line (git reads it
// as an empty configuration), the hooks placeholder holds one file,
// placeholderMarker, with the same line (git runs hooks by name only).
// The line names the owning process by PID and start time, so that a
// later run can tell a placeholder left by a crashed run (owner dead)
// from one in use by a sandbox running now, and by more than its name.

// placeholderMarker is the file inside a hooks placeholder.
const placeholderMarker = ".moat-placeholder"

// placeholderPrefix starts every placeholder's line.
const placeholderPrefix = "# moat placeholder for the run of process "

// ownerLine is this process's placeholder line.
func ownerLine() string {
	return fmt.Sprintf("%s%d started %d; removed when that run ends\n", placeholderPrefix, os.Getpid(), procStart(os.Getpid()))
}

// procStart is the start time of process pid in clock ticks since boot
// (field 22 of /proc/PID/stat), or 0 when it does not exist.
func procStart(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0
	}
	v, _ := strconv.ParseUint(f[19], 10, 64)
	return v
}

// staleOwner reports whether content is a placeholder line whose owner is
// no longer running.
func staleOwner(content []byte) bool {
	rest, ok := strings.CutPrefix(string(content), placeholderPrefix)
	if !ok || !strings.HasSuffix(rest, "; removed when that run ends\n") {
		return false
	}
	var pid int
	var start uint64
	if n, err := fmt.Sscanf(rest, "%d started %d;", &pid, &start); n != 2 || err != nil || pid <= 0 {
		return false
	}
	return procStart(pid) != start
}

// readSmall reads a regular file (not through a link) of at most 4 KiB.
func readSmall(p string) ([]byte, bool) {
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 4096 {
		return nil, false
	}
	b, err := os.ReadFile(p)
	return b, err == nil
}

// sweepPlaceholders removes the hooks and config placeholders in g left
// by a run whose process is dead. Anything else is left alone: a hooks
// directory that holds more than the marker, a config that says more.
func sweepPlaceholders(g string) {
	cfg := filepath.Join(g, "config")
	if b, ok := readSmall(cfg); ok && staleOwner(b) {
		_ = os.Remove(cfg)
	}
	hooks := filepath.Join(g, "hooks")
	entries, err := os.ReadDir(hooks)
	if err != nil || len(entries) != 1 || entries[0].Name() != placeholderMarker {
		return
	}
	marker := filepath.Join(hooks, placeholderMarker)
	if b, ok := readSmall(marker); ok && staleOwner(b) {
		if os.Remove(marker) == nil {
			_ = os.Remove(hooks)
		}
	}
}

// placeholders gives the repository at g a marked, empty hooks directory
// and config where they are missing, after sweeping stale ones.
func (cp *controlPlan) placeholders(g string) error {
	sweepPlaceholders(g)
	line := ownerLine()
	hooks := filepath.Join(g, "hooks")
	if _, err := os.Lstat(hooks); os.IsNotExist(err) {
		if err := os.Mkdir(hooks, 0o755); err != nil {
			return err
		}
		cp.created = append(cp.created, hooks)
		marker := filepath.Join(hooks, placeholderMarker)
		if err := writeNew(marker, line); err != nil {
			return err
		}
		cp.created = append(cp.created, marker)
		cp.marker = line
	}
	cfg := filepath.Join(g, "config")
	if _, err := os.Lstat(cfg); os.IsNotExist(err) {
		if err := writeNew(cfg, line); err != nil {
			return err
		}
		cp.created = append(cp.created, cfg)
		cp.marker = line
	}
	return nil
}

// writeNew creates p, which must not exist, holding content.
func writeNew(p, content string) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
