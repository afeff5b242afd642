package disklimit

import (
	"testing"

	"github.com/moat-sandbox/moat/internal/diskwatch"
)

// A burst is bounded by the smaller of the file size and disk limits.
func TestFileSizeBudget(t *testing.T) {
	cases := []struct{ disk, file, want int64 }{
		{20 << 20, 4 << 30, 20 << 20},
		{8 << 30, 4 << 30, 0},
		{0, 4 << 30, 0},
		{20 << 20, 0, 20 << 20},
	}
	for _, tc := range cases {
		l := &Limit{bytes: tc.disk, FileSize: tc.file}
		if got := l.FileSizeBudget(); got != tc.want {
			t.Errorf("fileSizeBudget(disk %d, file %d) = %d, want %d", tc.disk, tc.file, got, tc.want)
		}
	}
}

func TestInodeLimit(t *testing.T) {
	dir := t.TempDir()
	free := diskwatch.FreeInodes([]string{dir})
	cases := []struct {
		name         string
		inodes, disk int64
		want         int64
	}{
		{"explicit", 500, 20 << 20, 500},
		{"none", -1, 20 << 20, 0},
		{"derived from 20 MiB", 0, 20 << 20, 5120},
		{"floor", 0, 1 << 20, minDefaultInodes},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := &Limit{WorkDir: dir, DiskInodes: tc.inodes, bytes: tc.disk}
			want := tc.want
			if free >= 0 && tc.inodes == 0 {
				want = min(want, free/2)
			}
			if got := l.inodeLimit(); got != want {
				t.Fatalf("inodeLimit() = %d, want %d", got, want)
			}
		})
	}
	// Without a byte limit, half the free inodes at the call. Other tests
	// create and remove files on the same file system meanwhile, so the
	// count is read just before and just after: the answer must be half
	// of one of the counts seen between them, exactly when they agree.
	l := &Limit{WorkDir: dir}
	before := diskwatch.FreeInodes([]string{dir})
	got := l.inodeLimit()
	after := diskwatch.FreeInodes([]string{dir})
	if lo, hi := min(before, after)/2, max(before, after)/2; before >= 0 && (got < lo || got > hi) {
		t.Fatalf("inodeLimit() without a disk limit = %d, want half the free inodes, %d (%d after the call)", got, before/2, after/2)
	}
}
