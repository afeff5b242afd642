package cli

import (
	"strconv"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    int64
		wantErr bool
	}{
		{name: "plain bytes", in: "4096", want: 4096},
		{name: "zero means default", in: "0", want: 0},
		{name: "byte suffix", in: "100B", want: 100},
		{name: "kilo", in: "1K", want: 1 << 10},
		{name: "kilo lower", in: "2k", want: 2 << 10},
		{name: "KiB", in: "3KiB", want: 3 << 10},
		{name: "kib lower", in: "3kib", want: 3 << 10},
		{name: "KB is binary", in: "1KB", want: 1 << 10},
		{name: "mega", in: "512M", want: 512 << 20},
		{name: "MiB", in: "512MiB", want: 512 << 20},
		{name: "giga", in: "2G", want: 2 << 30},
		{name: "gib lower", in: "2gib", want: 2 << 30},
		{name: "tera", in: "1T", want: 1 << 40},
		{name: "TiB", in: "1TiB", want: 1 << 40},
		{name: "fraction", in: "1.5G", want: 3 << 29},
		{name: "fraction rounds down", in: "0.1K", want: 102},
		{name: "unlimited", in: "unlimited", want: -1},
		{name: "unlimited any case", in: "Unlimited", want: -1},
		{name: "largest", in: "9223372036854775807", want: 1<<63 - 1},
		{name: "largest in T", in: "8388607T", want: 8388607 << 40},
		{name: "empty", in: "", wantErr: true},
		{name: "negative", in: "-1", wantErr: true},
		{name: "negative with suffix", in: "-5M", wantErr: true},
		{name: "plus sign", in: "+5M", wantErr: true},
		{name: "unknown suffix", in: "12X", wantErr: true},
		{name: "suffix only", in: "G", wantErr: true},
		{name: "space", in: "1 G", wantErr: true},
		{name: "leading space", in: " 1G", wantErr: true},
		{name: "decimal suffix", in: "1GB2", wantErr: true},
		{name: "fractional bytes", in: "1.5", wantErr: true},
		{name: "trailing dot", in: "1.G", wantErr: true},
		{name: "leading dot", in: ".5G", wantErr: true},
		{name: "two dots", in: "1.2.3G", wantErr: true},
		{name: "overflow", in: "9223372036854775808", wantErr: true},
		{name: "overflow with suffix", in: "8388608T", wantErr: true},
		{name: "hex", in: "0x10", wantErr: true},
		{name: "exponent", in: "1e9", wantErr: true},
		{name: "garbage", in: "lots", wantErr: true},
		{name: "too long", in: "0000000000000000000000000000000000000000000000000000000000000000001", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseSize(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseSize(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			}
			if err == nil && got != tt.want {
				t.Errorf("parseSize(%q) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func TestFormatSize(t *testing.T) {
	tests := []struct {
		name string
		in   int64
		want string
	}{
		{name: "unlimited", in: -1, want: "unlimited"},
		{name: "zero", in: 0, want: "0"},
		{name: "bytes", in: 1000, want: "1000"},
		{name: "kilo", in: 3072, want: "3K"},
		{name: "not a whole kilo", in: 1536, want: "1536"},
		{name: "mega", in: 512 << 20, want: "512M"},
		{name: "giga", in: 3 << 30, want: "3G"},
		{name: "tera", in: 5 << 40, want: "5T"},
		{name: "mixed picks exact", in: 1<<30 + 1<<20, want: "1025M"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := formatSize(tt.in); got != tt.want {
				t.Errorf("formatSize(%d) = %q, want %q", tt.in, got, tt.want)
			}
			if back, err := parseSize(tt.want); err != nil || back != tt.in {
				t.Errorf("parseSize(%q) = %d, %v; want %d", tt.want, back, err, tt.in)
			}
		})
	}
}

func TestParseCount(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    int64
		wantErr bool
	}{
		{name: "number", in: "64", want: 64},
		{name: "zero", in: "0", want: 0},
		{name: "unlimited", in: "unlimited", want: -1},
		{name: "negative", in: "-1", wantErr: true},
		{name: "suffix", in: "1K", wantErr: true},
		{name: "empty", in: "", wantErr: true},
		{name: "overflow", in: "99999999999999999999", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseCount(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseCount(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			}
			if err == nil && got != tt.want {
				t.Errorf("parseCount(%q) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"0", "1", "512M", "2G", "1.5G", "0.1K", "3KiB", "1TB", "unlimited", "12X", "-1", "", "9223372036854775807", "8388607T", "1.", ".5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseSize(s)
		if err != nil {
			return
		}
		if n < -1 {
			t.Fatalf("parseSize(%q) = %d: below -1", s, n)
		}
		if (n == -1) != strings.EqualFold(s, unlimited) {
			t.Fatalf("parseSize(%q) = -1 for something other than unlimited", s)
		}
		back, err := parseSize(formatSize(n))
		if err != nil || back != n {
			t.Fatalf("round trip of %q: parseSize(formatSize(%d) = %q) = %d, %v", s, n, formatSize(n), back, err)
		}
		if isDigits(s) {
			if want, err := strconv.ParseInt(s, 10, 64); err != nil || want != n {
				t.Fatalf("parseSize(%q) = %d, strconv says %d, %v", s, n, want, err)
			}
		}
	})
}

// isDigits, for the fuzz test, reports whether s is one or more ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
