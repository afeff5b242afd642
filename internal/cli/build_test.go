package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// --build and the config file's build key: the flag beats the file either
// way, a bare --build means true, and nothing means off.
func TestBuildFlag(t *testing.T) {
	dir := t.TempDir()
	on := filepath.Join(dir, "on.toml")
	os.WriteFile(on, []byte("build = true\n"), 0o644)
	tests := []struct {
		name string
		args []string
		want bool
	}{
		{name: "off by default", args: nil, want: false},
		{name: "bare flag", args: []string{"--build"}, want: true},
		{name: "explicit false", args: []string{"--build=false"}, want: false},
		{name: "file", args: []string{"--config", on}, want: true},
		{name: "flag beats file", args: []string{"--config", on, "--build=false"}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseSandboxFlags(t, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Build != tt.want {
				t.Errorf("Build = %v, want %v", cfg.Build, tt.want)
			}
		})
	}
	if _, err := parseSandboxFlags(t, []string{"--build=maybe"}); err == nil {
		t.Error("--build=maybe accepted")
	}
}
