package hostview

import (
	"os"
	"testing"
)

// TestExactNames checks which directories a listing may answer for: not
// those of file systems outside the list that never fold case, such as
// procfs and sysfs (stand-ins for vfat, CIFS and FUSE, which cannot be
// mounted here), whatever their names.
func TestExactNames(t *testing.T) {
	tests := []struct {
		dir  string
		want bool
	}{
		{"/proc", false},
		{"/sys", false},
	}
	for _, tc := range tests {
		t.Run(tc.dir, func(t *testing.T) {
			f, err := os.Open(tc.dir)
			if err != nil {
				t.Skipf("%s cannot be opened here: %v", tc.dir, err)
			}
			defer f.Close()
			if got := exactNames(f); got != tc.want {
				t.Errorf("exactNames(%s) = %v, want %v", tc.dir, got, tc.want)
			}
			if got := readListing(tc.dir) != nil; got != tc.want {
				t.Errorf("readListing(%s) listed it: %v, want %v", tc.dir, got, tc.want)
			}
		})
	}
}
