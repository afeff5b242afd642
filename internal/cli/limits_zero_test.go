package cli

import (
	"errors"
	"strings"
	"testing"
)

// TestValidateLimitFlags: a limit flag below its least value, or given as
// 0, is a usage error (exit 2) that names the flag and the least value;
// the least value itself and "unlimited" pass.
func TestValidateLimitFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string // "" means accepted
	}{
		{[]string{"--memory", "1"}, "--memory 1: below the least that lets a command start; want at least 16M (16777216 bytes), or unlimited"},
		{[]string{"--memory", "0"}, "--memory 0: want at least 16M, or unlimited; leave the flag out for the default"},
		{[]string{"--memory", "16M"}, ""},
		{[]string{"--disk", "1"}, "--disk 1: below the least that lets a command start; want at least 1M (1048576 bytes), or unlimited"},
		{[]string{"--disk", "0"}, "--disk 0: want at least 1M, or unlimited"},
		{[]string{"--disk", "1M"}, ""},
		{[]string{"--disk-inodes", "0"}, "--disk-inodes 0: want at least 16, or unlimited"},
		{[]string{"--disk-inodes", "1"}, "--disk-inodes 1: below the least that lets a command start; want at least 16, or unlimited"},
		{[]string{"--disk-inodes", "15"}, "--disk-inodes 15: below the least"},
		{[]string{"--disk-inodes", "16"}, ""},
		{[]string{"--disk-inodes", "unlimited"}, ""},
		{[]string{"--cpu-time", "0"}, "--cpu-time 0: want at least 1, or unlimited"},
		{[]string{"--cpu-time", "1"}, ""},
		{[]string{"--processes", "1"}, "--processes 1: below the least that lets a command start; want at least 16, or unlimited"},
		{[]string{"--processes", "0"}, "--processes 0: want at least 16"},
		{[]string{"--processes", "16"}, ""},
		{[]string{"--file-size", "1"}, "--file-size 1: below the least that lets a command start; want at least 1K (1024 bytes), or unlimited"},
		{[]string{"--file-size", "1K"}, ""},
		{[]string{"--open-files", "0"}, "--open-files 0: want at least 32"},
		{[]string{"--open-files", "31"}, "--open-files 31: too few"},
		{[]string{"--timeout", "0"}, ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, "="), func(t *testing.T) {
			_, err := parseSandboxFlags(t, tt.args)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
			var ue *usageError
			if !errors.As(err, &ue) {
				t.Errorf("err = %T, want a usage error (exit 2)", err)
			}
		})
	}
}
