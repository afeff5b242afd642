package diskwatch

import (
	"os"
	"path/filepath"
	"testing"
)

// countEntries is the inode count on file systems whose statfs has none
// (btrfs); it must stop once past its bound.
func TestCountEntries(t *testing.T) {
	dir := t.TempDir()
	for i := range 50 {
		sub := filepath.Join(dir, "d", string(rune('a'+i%5)))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, "f"+string(rune('0'+i/5))), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// root + d + 5 directories + 50 files
	cases := []struct {
		stop, want int64
	}{{-1, 57}, {10, 11}, {0, 1}, {1000, 57}}
	for _, tc := range cases {
		if got := countEntries(dir, tc.stop); got != tc.want {
			t.Errorf("countEntries(stop=%d) = %d, want %d", tc.stop, got, tc.want)
		}
	}
}
