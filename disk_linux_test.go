package moat

import "testing"

// A burst is bounded by the smaller of the file size and disk limits.
func TestFileSizeBudget(t *testing.T) {
	cases := []struct{ disk, file, want int64 }{
		{20 << 20, 4 << 30, 20 << 20},
		{8 << 30, 4 << 30, 0},
		{0, 4 << 30, 0},
		{20 << 20, 0, 20 << 20},
	}
	for _, tc := range cases {
		s := &Sandbox{diskLimitBytes: tc.disk, cfg: Config{Limits: Limits{FileSizeBytes: tc.file}}}
		if got := s.fileSizeBudget(); got != tc.want {
			t.Errorf("fileSizeBudget(disk %d, file %d) = %d, want %d", tc.disk, tc.file, got, tc.want)
		}
	}
}
