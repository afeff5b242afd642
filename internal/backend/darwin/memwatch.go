package darwin

import (
	"fmt"
	"time"
)

// memoryInterval is how often the memory watch adds up a command's
// process group.
const memoryInterval = 50 * time.Millisecond

// sampler reads the host's process table: the members of a process group
// and a process's physical footprint (what Activity Monitor calls its
// memory: resident, compressed and swapped pages it owns).
type sampler interface {
	members(pgid int) ([]int, error)
	footprint(pid int) (uint64, error)
}

// groupFootprint adds up the footprint of every member of group pgid. A
// member that exits between the two reads is skipped; a group whose
// members cannot be listed is an error.
func groupFootprint(s sampler, pgid int) (uint64, error) {
	pids, err := s.members(pgid)
	if err != nil {
		return 0, err
	}
	var sum uint64
	for _, pid := range pids {
		fp, err := s.footprint(pid)
		if err != nil {
			continue // gone since it was listed
		}
		sum += fp
	}
	return sum, nil
}

// overLimit reports why group pgid is over limit bytes, or "".
func overLimit(s sampler, pgid int, limit int64) (string, error) {
	used, err := groupFootprint(s, pgid)
	if err != nil || limit <= 0 || used <= uint64(limit) {
		return "", err
	}
	return fmt.Sprintf("physical footprint of the process group %d MiB", used>>20), nil
}
