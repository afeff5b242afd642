package diskwatch

import "time"

// setFileSizeLimit cannot lower another process's RLIMIT_FSIZE here (no
// prlimit): the file size budget each command starts with holds.
func setFileSizeLimit(int, int64) {}

// watchInterval is how often the disk watchdog samples free space and
// free inodes.
const watchInterval = 25 * time.Millisecond
