// Package disklimit wires a sandbox's disk limits (Limits.DiskBytes and
// Limits.DiskInodes) to the disk watch (internal/diskwatch): it resolves
// the defaults, says which places count, bounds a burst with RLIMIT_FSIZE
// and describes the layer for the report. It depends on nothing of the
// module but internal/diskwatch and internal/spec.
package disklimit

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/moat-sandbox/moat/internal/diskwatch"
	"github.com/moat-sandbox/moat/internal/paths"
	"github.com/moat-sandbox/moat/internal/spec"
)

// DefaultBytesPerInode is how many bytes of the disk limit buy one inode
// when Limits.DiskInodes is zero: one file or directory per 4 KiB block.
const DefaultBytesPerInode = 4096

// minDefaultInodes is the fewest inodes a derived default allows.
const minDefaultInodes = 1024

// Limit is one sandbox's disk limits and the places they count. The zero
// value has no limits and no places, and is resolved to none.
type Limit struct {
	// DiskBytes is the configured Limits.DiskBytes: positive a limit,
	// negative none, zero half the space free at Resolve.
	DiskBytes int64
	// DiskInodes is the configured Limits.DiskInodes: positive a limit,
	// negative none, zero a default derived from the byte limit.
	DiskInodes int64
	// FileSize is the configured Limits.FileSizeBytes; zero or negative
	// means none.
	FileSize int64
	// WorkDir is the sandbox's working directory, resolved.
	WorkDir string
	// Grants are the writable grants' paths.
	Grants []string
	// Private returns the sandbox's private roots (temp, home, cache
	// stores) as they are now; nil means none.
	Private func() []string
	// Free returns the bytes free on dir's file system; nil means they
	// cannot be measured.
	Free func(dir string) (int64, error)

	// bytes and inodes are the resolved limits; 0 means none.
	bytes, inodes int64
	// watches counts the commands the disk watch ran for, each with
	// inodes inodes of its own.
	watches atomic.Int64
}

// Resolve decides the limits the watch holds every command to, from the
// configured values and what is free now. New calls it last.
func (l *Limit) Resolve() {
	l.bytes = l.diskLimit()
	l.inodes = l.inodeLimit()
}

// Bytes is the resolved byte limit; 0 means none.
func (l *Limit) Bytes() int64 { return l.bytes }

// Inodes is the resolved inode limit; 0 means none.
func (l *Limit) Inodes() int64 { return l.inodes }

// Watches is how many commands the disk watch ran for, each with Inodes
// inodes of its own; 0 before the first.
func (l *Limit) Watches() int64 { return l.watches.Load() }

// diskLimit returns the bytes the working directory's file system may lose
// while a command runs: the configured value, or half the space free now.
func (l *Limit) diskLimit() int64 {
	switch v := l.DiskBytes; {
	case v > 0:
		return v
	case v == 0:
		return 0
	}
	if l.Free == nil {
		return 0
	}
	free, err := l.Free(l.WorkDir)
	if err != nil {
		return 0
	}
	return free / 2
}

// inodeLimit returns how many files and directories the sandbox may create
// while a command runs: the configured value, or one per
// DefaultBytesPerInode of the disk limit (at least minDefaultInodes), and
// never more than half the inodes free now; zero means none.
func (l *Limit) inodeLimit() int64 {
	v := l.DiskInodes
	switch {
	case v > 0:
		return v
	case v < 0:
		return 0
	}
	free := diskwatch.FreeInodes(l.Roots())
	limit := int64(-1)
	if l.bytes > 0 {
		limit = max(l.bytes/DefaultBytesPerInode, minDefaultInodes)
	}
	if free >= 0 && (limit < 0 || free/2 < limit) {
		limit = free / 2
	}
	if limit < 0 {
		// No byte limit and no inode count to halve: a walk still counts
		// entries, against the same ceiling as a 4 GiB disk limit.
		limit = (4 << 30) / DefaultBytesPerInode
	}
	return max(limit, 1)
}

// Roots are every host place the sandbox may write, on whatever file
// system each lies: the working directory, the private roots, and the
// writable grants. The disk watch counts each file system once.
func (l *Limit) Roots() []string {
	roots := []string{l.WorkDir}
	if l.Private != nil {
		roots = append(roots, l.Private()...)
	}
	return append(roots, l.Grants...)
}

// FileSizeBudget is the RLIMIT_FSIZE every command starts with when the
// disk limit is smaller than the file size limit: a single burst write
// then stops at the disk limit, however fast it is, instead of outrunning
// the watchdog. Zero means the file size limit holds as configured.
func (l *Limit) FileSizeBudget() int64 {
	d, f := l.bytes, l.FileSize
	if d > 0 && (f <= 0 || d < f) {
		return d
	}
	return 0
}

// StartFileSize is the RLIMIT_FSIZE the engine applies, before Resolve:
// the file size limit, or the disk limit where that is smaller.
func (l *Limit) StartFileSize() int64 {
	d, f := l.diskLimit(), l.FileSize
	if d > 0 && (f <= 0 || d < f) {
		return d
	}
	return f
}

// Watch watches the command pid, once it has consumed more than the disk
// limit, in bytes or in inodes, on the file systems of every writable
// place (Roots, internal/diskwatch), calling exceeded; spent is called
// when the limit is all but spent. lowerFileSize says the command started
// with FileSizeBudget. It returns a function that stops it, after a last
// sample.
func (l *Limit) Watch(pid func() int, lowerFileSize bool, exceeded func(diskwatch.Exceeded), spent func(used int64)) (stop func(), err error) {
	l.watches.Add(1)
	return diskwatch.Watch(l.Roots(), l.bytes, l.inodes, pid, lowerFileSize, exceeded, spent)
}

// Layer says how the disk limits are enforced, for the report.
func (l *Limit) Layer() spec.Layer {
	if l.bytes <= 0 && l.inodes <= 0 {
		return spec.Layer{Name: "disk", Detail: "no disk or inode limit"}
	}
	n, counted := diskwatch.FileSystems(l.Roots())
	d := fmt.Sprintf("free space and free inodes of the %d file system(s) of every writable place (working directory, private temp and home, writable grants), sampled every %v and when each command ends; exact where nothing else writes them (another writer's use counts against the sandbox, and what it frees on the same file system offsets the sandbox's use there); a burst between two samples is bounded by one sample's worth of writes, and RLIMIT_FSIZE holds each file to the bytes left", n, diskwatch.Interval.Round(time.Millisecond))
	if n > counted {
		d += fmt.Sprintf("; %d file system(s) without inode counts are walked instead", n-counted)
	}
	return spec.Layer{Name: "disk", Active: true, Detail: d}
}

// Written reports whether path lies where the sandbox writes: under one of
// Roots (the working directory, its private temp and home, a writable
// grant).
func (l *Limit) Written(path string) bool {
	return paths.UnderAny(path, l.Roots())
}
