package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/moat-sandbox/moat"
)

// parseSandboxFlags parses args as run's flags and builds the config.
func parseSandboxFlags(t *testing.T, args []string) (moat.Config, error) {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.SetOutput(discard{})
	f := addSandboxFlags(fs)
	if err := fs.Parse(args); err != nil {
		return moat.Config{}, flagError(nil, err)
	}
	return f.config()
}

// discard swallows pflag's own printing.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func TestSandboxConfig(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want moat.Config
	}{
		{name: "no flags is the zero config at default isolation", args: nil, want: moat.Config{}},
		{name: "workdir", args: []string{"--workdir", dir}, want: moat.Config{WorkDir: dir, KeepCaches: true}},
		{name: "workdir, fresh home", args: []string{"--workdir", dir, "--fresh-home"}, want: moat.Config{WorkDir: dir}},
		{name: "env", args: []string{"--env", "TERM", "--env", "A=1"}, want: moat.Config{Env: moat.Env{Passthrough: []string{"TERM"}, Set: []string{"A=1"}}}},
		{name: "limits", args: []string{
			"--memory", "512M", "--cpu-time", "30", "--file-size", "1G", "--processes", "64",
			"--open-files", "256", "--disk", "2G", "--timeout", "1m30s",
		}, want: moat.Config{Limits: moat.Limits{
			MemoryBytes: 512 << 20, CPUSeconds: 30, FileSizeBytes: 1 << 30, Processes: 64,
			OpenFiles: 256, DiskBytes: 2 << 30, Timeout: 90 * time.Second,
		}}},
		{name: "unlimited", args: []string{
			"--memory", "unlimited", "--cpu-time", "unlimited", "--file-size", "unlimited",
			"--processes", "unlimited", "--open-files", "unlimited", "--disk", "unlimited",
		}, want: moat.Config{Limits: moat.Limits{
			MemoryBytes: -1, CPUSeconds: -1, FileSizeBytes: -1, Processes: -1, OpenFiles: -1, DiskBytes: -1,
		}}},
		{name: "zero timeout keeps the default", args: []string{"--timeout", "0"}, want: moat.Config{}},
		{name: "timeout in bare seconds", args: []string{"--timeout", "45"}, want: moat.Config{Limits: moat.Limits{Timeout: 45 * time.Second}}},
		{name: "nice", args: []string{"--nice", "10"}, want: moat.Config{Nice: 10}},
		{name: "io priority utility", args: []string{"--io-priority", "utility"}, want: moat.Config{IOPriority: moat.IOPriorityUtility}},
		{name: "io priority background", args: []string{"--io-priority=background"}, want: moat.Config{IOPriority: moat.IOPriorityBackground}},
		{name: "best effort", args: []string{"--best-effort"}, want: moat.Config{Enforcement: moat.BestEffort}},
		{name: "last flag wins", args: []string{"--memory", "1G", "--memory", "2G"}, want: moat.Config{Limits: moat.Limits{MemoryBytes: 2 << 30}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseSandboxFlags(t, tt.args)
			if err != nil {
				t.Fatalf("config: %v", err)
			}
			// The CLI's isolation level and its preset, which these
			// flags leave alone.
			tt.want.Isolation = moat.IsolationDefault
			sec := moat.IsolationDefault.Security()
			tt.want.Security = &sec
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("config =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestSandboxFlagErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string // the whole message, without "moat: "
	}{
		{name: "bad size", args: []string{"--memory", "12X"}, want: `--memory "12X": want a size like 512M or 2G`},
		{name: "negative size", args: []string{"--disk=-1"}, want: `--disk "-1": want a size like 512M or 2G`},
		{name: "huge size", args: []string{"--file-size", "9999999T"}, want: `--file-size "9999999T": too large`},
		{name: "bad count", args: []string{"--processes", "many"}, want: `--processes "many": want a whole number or "unlimited"`},
		{name: "bad cpu time", args: []string{"--cpu-time", "1.5"}, want: `--cpu-time "1.5": want a whole number or "unlimited"`},
		{name: "nice too high", args: []string{"--nice", "25"}, want: `--nice "25": want 0 (unchanged) through 19; priority can only be lowered`},
		{name: "nice negative", args: []string{"--nice=-5"}, want: `--nice "-5": want 0 (unchanged) through 19; priority can only be lowered`},
		{name: "nice garbage", args: []string{"--nice", "low"}, want: `--nice "low": want 0 (unchanged) through 19; priority can only be lowered`},
		{name: "io priority unknown", args: []string{"--io-priority", "fast"}, want: `--io-priority "fast": want utility or background`},
		{name: "io priority empty", args: []string{"--io-priority="}, want: `--io-priority "": want utility or background`},
		{name: "negative timeout", args: []string{"--timeout", "-1s"}, want: `--timeout "-1s": want a duration like 30s or 2m`},
		{name: "timeout garbage", args: []string{"--timeout", "soon"}, want: `--timeout "soon": want a duration like 30s or 2m`},
		{name: "empty env name", args: []string{"--env", "=x"}, want: `--env "=x": want NAME or NAME=VALUE`},
		{name: "invalid env name", args: []string{"--env", "A-B=1"}, want: `--env "A-B=1": "A-B" is not a valid variable name (letters, digits and _, not starting with a digit)`},
		// A missing one is created (heel_test.go); under a file it cannot be.
		{name: "workdir under a file", args: []string{"--workdir", file + "/moat"}, want: `--workdir "` + file + `/moat": not a directory`},
		{name: "workdir is a file", args: []string{"--workdir", file}, want: `--workdir "` + file + `": not a directory`},
		{name: "unknown flag", args: []string{"--bogus"}, want: `unknown flag: --bogus`},
		{name: "missing value", args: []string{"--memory"}, want: `flag needs an argument: --memory`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseSandboxFlags(t, tt.args)
			if err == nil {
				t.Fatal("no error")
			}
			code, line := exitCode(err)
			if code != exitUsage {
				t.Errorf("exit code %d, want %d", code, exitUsage)
			}
			if want := "moat: " + tt.want; line != want {
				t.Errorf("message\n%s\nwant\n%s", line, want)
			}
			if strings.Contains(line, "\n") {
				t.Errorf("message has more than one line: %q", line)
			}
		})
	}
}
