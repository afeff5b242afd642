//go:build !linux && !darwin

package diskwatch

import (
	"errors"
	"time"
)

// fsSample is one file system's free space and free inodes.
type fsSample struct {
	id          [2]int32
	availBytes  int64
	freeInodes  int64
	totalInodes int64
}

func statFS(string) (fsSample, error) { return fsSample{}, errors.ErrUnsupported }

func setFileSizeLimit(int, int64) {}

const watchInterval = time.Second
