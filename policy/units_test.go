package policy

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    int64
		wantErr error
	}{
		{name: "bytes", in: "4096", want: 4096},
		{name: "zero means default", in: "0", want: 0},
		{name: "byte suffix", in: "100B", want: 100},
		{name: "kilo", in: "2k", want: 2 << 10},
		{name: "KiB", in: "3KiB", want: 3 << 10},
		{name: "KB is binary", in: "1KB", want: 1 << 10},
		{name: "mega", in: "512M", want: 512 << 20},
		{name: "giga", in: "2gib", want: 2 << 30},
		{name: "tera", in: "1T", want: 1 << 40},
		{name: "fraction rounds down", in: "0.1K", want: 102},
		{name: "unlimited any case", in: "Unlimited", want: -1},
		{name: "largest", in: "9223372036854775807", want: 1<<63 - 1},
		{name: "empty", in: "", wantErr: errSize},
		{name: "negative", in: "-1", wantErr: errSize},
		{name: "unknown suffix", in: "12X", wantErr: errSize},
		{name: "fractional bytes", in: "1.5", wantErr: errSize},
		{name: "leading dot", in: ".5G", wantErr: errSize},
		{name: "overflow", in: "8388608T", wantErr: ErrTooLarge},
		{name: "too long", in: strings.Repeat("0", 65) + "1", wantErr: errSize},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSize(tt.in)
			if err != tt.wantErr || err == nil && got != tt.want {
				t.Fatalf("ParseSize(%q) = %d, %v; want %d, %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestFormatSize(t *testing.T) {
	for in, want := range map[int64]string{-1: "unlimited", 0: "0", 1000: "1000", 3072: "3K", 1536: "1536", 5 << 40: "5T", 1<<30 + 1<<20: "1025M"} {
		if got := FormatSize(in); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", in, got, want)
		}
	}
}

func TestParseCount(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr error
	}{
		{"64", 64, nil}, {"0", 0, nil}, {"unlimited", -1, nil}, {"UNLIMITED", -1, nil},
		{"-1", 0, errCount}, {"1K", 0, errCount}, {"", 0, errCount}, {"99999999999999999999", 0, ErrTooLarge},
	}
	for _, tt := range tests {
		got, err := ParseCount(tt.in)
		if err != tt.wantErr || got != tt.want {
			t.Errorf("ParseCount(%q) = %d, %v; want %d, %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr error
	}{
		{"30s", 30 * time.Second, nil}, {"1m30s", 90 * time.Second, nil}, {"45", 45 * time.Second, nil},
		{"0", 0, nil}, {"-1s", 0, errDuration}, {"soon", 0, errDuration}, {"", 0, errDuration},
		{"9223372037", 0, ErrTooLarge}, {"99999999999999999999", 0, ErrTooLarge},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if err != tt.wantErr || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v, %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestParseNice(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int
		ok   bool
	}{{"0", 0, true}, {"19", 19, true}, {"20", 0, false}, {"-5", 0, false}, {"+5", 0, false}, {"low", 0, false}, {"", 0, false}} {
		got, err := ParseNice(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseNice(%q) = %d, %v", tt.in, got, err)
		}
	}
}

// FuzzParseSize: accepted sizes are -1 only for "unlimited", never below,
// and survive a round trip through FormatSize.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"0", "512M", "1.5G", "0.1K", "3KiB", "unlimited", "12X", "-1", "", "8388607T", "1.", ".5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			return
		}
		if n < -1 || (n == -1) != strings.EqualFold(s, Unlimited) {
			t.Fatalf("ParseSize(%q) = %d", s, n)
		}
		if back, err := ParseSize(FormatSize(n)); err != nil || back != n {
			t.Fatalf("round trip of %q: %d -> %q -> %d, %v", s, n, FormatSize(n), back, err)
		}
		if isDigits(s) {
			if want, err := strconv.ParseInt(s, 10, 64); err != nil || want != n {
				t.Fatalf("ParseSize(%q) = %d, strconv says %d, %v", s, n, want, err)
			}
		}
	})
}
