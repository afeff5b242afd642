package size

import "testing"

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{-1, "unlimited"}, {0, "0"}, {1000, "1000"}, {1 << 10, "1K"}, {16 << 20, "16M"},
		{3 << 30, "3G"}, {1 << 40, "1T"}, {1536 << 10, "1536K"}, {(1 << 20) + 1, "1048577"},
	} {
		if got := Format(tc.n); got != tc.want {
			t.Errorf("Format(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestHuman(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "0 bytes"}, {512, "512 bytes"}, {1023, "1023 bytes"}, {1 << 10, "1 KiB"},
		{64 << 20, "64 MiB"}, {3 << 29, "1.5 GiB"}, {5 << 40, "5 TiB"}, {1 << 50, "1024 TiB"}, {20<<20 + 1, "20.0 MiB"},
	} {
		if got := Human(tc.n); got != tc.want {
			t.Errorf("Human(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
