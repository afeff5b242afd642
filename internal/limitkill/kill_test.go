package limitkill

import "testing"

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 bytes", 1023: "1023 bytes", 1024: "1 KiB", 64 << 20: "64 MiB",
		3 << 29: "1.5 GiB", 5 << 40: "5 TiB", 20<<20 + 1: "20.0 MiB"} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
