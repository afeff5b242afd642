package moat

import (
	"errors"
	"net/netip"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config
		want  string // the whole message; "" means valid
		field string // the *ConfigError's Field; "" for another error
	}{
		{"zero config", Config{}, "", ""},
		{"every field at a valid extreme", Config{Nice: MaxNice, IOPriority: IOPriorityBackground, Isolation: IsolationPermissive, Enforcement: BestEffort,
			Env:        Env{Set: []string{"A=", "B=c=d"}, Passthrough: []string{"TERM"}},
			AllowLocal: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
			Grants:     []Grant{{Path: "/no/such/path/needed", Access: READ | WRITE | EXEC}},
			Limits:     Limits{OpenFiles: MinOpenFiles, Processes: -1, MemoryBytes: -1}}, "", ""},
		{"open files unlimited", Config{Limits: Limits{OpenFiles: -1}}, "", ""},
		{"nice too high", Config{Nice: MaxNice + 1}, "nice 20: want 0 (unchanged) through 19; priority can only be lowered", "nice"},
		{"nice negative", Config{Nice: -1}, "nice -1: want 0 (unchanged) through 19; priority can only be lowered", "nice"},
		{"io priority above", Config{IOPriority: IOPriorityBackground + 1}, "io priority 3: unknown", "io priority"},
		{"io priority below", Config{IOPriority: -1}, "io priority -1: unknown", "io priority"},
		{"isolation", Config{Isolation: IsolationPermissive + 1}, "isolation 3: unknown", "isolation"},
		{"isolation negative", Config{Isolation: -1}, "isolation -1: unknown", "isolation"},
		{"enforcement", Config{Enforcement: 9}, "enforcement 9: unknown", "enforcement"},
		{"env without equals", Config{Env: Env{Set: []string{"NOVALUE"}}}, `env "NOVALUE": want NAME=VALUE`, "env"},
		{"env empty name", Config{Env: Env{Set: []string{"=x"}}}, `env "=x": want NAME=VALUE`, "env"},
		{"passthrough with equals", Config{Env: Env{Passthrough: []string{"A=B"}}}, `env passthrough "A=B": want a variable name`, "env passthrough"},
		{"passthrough empty", Config{Env: Env{Passthrough: []string{""}}}, `env passthrough "": want a variable name`, "env passthrough"},
		{"allow local invalid", Config{AllowLocal: []netip.Prefix{{}}}, `allow local #1: invalid prefix "invalid Prefix"`, ""},
		{"grant relative", Config{Grants: []Grant{{Path: "rel", Access: READ}}}, `grant "rel": path must be absolute and clean`, "grant"},
		{"grant unclean", Config{Grants: []Grant{{Path: "/a/../b", Access: READ}}}, `grant "/a/../b": path must be absolute and clean`, "grant"},
		{"grant no access", Config{Grants: []Grant{{Path: "/a"}}}, `grant "/a": invalid access 0`, "grant"},
		{"grant unknown bits", Config{Grants: []Grant{{Path: "/a", Access: 0x40}}}, `grant "/a": invalid access 64`, "grant"},
		{"too few open files", Config{Limits: Limits{OpenFiles: 3}}, "limits: open files 3: too few for the sandbox's helper and the command's standard streams; want at least 32", "limits: open files"},
		{"one below the least", Config{Limits: Limits{OpenFiles: MinOpenFiles - 1}}, "limits: open files 31: too few for the sandbox's helper and the command's standard streams; want at least 32", "limits: open files"},
		// Each limit at its least value passes, one below is refused
		// with the least named (validate.go).
		{"limits at their least", Config{Limits: Limits{MemoryBytes: MinMemoryBytes, Processes: MinProcesses, FileSizeBytes: MinFileSizeBytes, DiskBytes: MinDiskBytes, DiskInodes: MinDiskInodes, CPUSeconds: MinCPUSeconds}}, "", ""},
		{"limits unlimited", Config{Limits: Limits{MemoryBytes: -1, Processes: -1, FileSizeBytes: -1, DiskBytes: -1, DiskInodes: -1, CPUSeconds: -1}}, "", ""},
		{"memory of one byte", Config{Limits: Limits{MemoryBytes: 1}}, "limits: memory 1: below the least that lets a command start; want at least 16M (16777216 bytes), or unlimited", "limits: memory"},
		{"memory one below", Config{Limits: Limits{MemoryBytes: MinMemoryBytes - 1}}, "limits: memory 16777215: below the least that lets a command start; want at least 16M (16777216 bytes), or unlimited", "limits: memory"},
		{"processes one below", Config{Limits: Limits{Processes: MinProcesses - 1}}, "limits: processes 15: below the least that lets a command start; want at least 16, or unlimited", "limits: processes"},
		{"file size one below", Config{Limits: Limits{FileSizeBytes: MinFileSizeBytes - 1}}, "limits: file size 1023: below the least that lets a command start; want at least 1K (1024 bytes), or unlimited", "limits: file size"},
		{"disk of one byte", Config{Limits: Limits{DiskBytes: 1}}, "limits: disk 1: below the least that lets a command start; want at least 1M (1048576 bytes), or unlimited", "limits: disk"},
		{"disk inodes one below", Config{Limits: Limits{DiskInodes: MinDiskInodes - 1}}, "limits: disk inodes 15: below the least that lets a command start; want at least 16, or unlimited", "limits: disk inodes"},
		{"disk inodes one", Config{Limits: Limits{DiskInodes: 1}}, "limits: disk inodes 1: below the least that lets a command start; want at least 16, or unlimited", "limits: disk inodes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			if err == nil || err.Error() != tt.want {
				t.Fatalf("Validate = %v, want %q", err, tt.want)
			}
			var ce *ConfigError
			if got := errors.As(err, &ce); got != (tt.field != "") || got && ce.Field != tt.field {
				t.Fatalf("Validate = %#v: want a *ConfigError of field %q", err, tt.field)
			}
			// New refuses the same Config with the same message.
			if _, nerr := normalize(tt.cfg, nil); nerr == nil || nerr.Error() != tt.want {
				t.Errorf("normalize = %v, want %q", nerr, tt.want)
			}
		})
	}
}

// Every refusal of Validate matches ErrInvalidConfig, and names its field.
func TestValidateErrorsMatchSentinel(t *testing.T) {
	for _, cfg := range []Config{
		{Nice: 20},
		{IOPriority: 9},
		{Isolation: 7},
		{Grants: []Grant{{Path: "rel", Access: READ}}},
		{Limits: Limits{OpenFiles: 3}},
	} {
		err := cfg.Validate()
		var ce *ConfigError
		if !errors.Is(err, ErrInvalidConfig) || !errors.As(err, &ce) || ce.Field == "" {
			t.Errorf("Validate(%+v) = %v, want a *ConfigError matching ErrInvalidConfig", cfg, err)
		}
	}
	if err := (Config{}).Validate(); err != nil {
		t.Errorf("the zero Config is refused: %v", err)
	}
}
