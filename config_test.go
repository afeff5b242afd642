package moat

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

func TestNormalizeRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"nice too high", Config{Nice: 20}, "nice 20"},
		{"nice negative", Config{Nice: -1}, "nice -1"},
		{"io priority", Config{IOPriority: 7}, "io priority 7"},
		{"enforcement", Config{Enforcement: 9}, "enforcement 9"},
		{"env without equals", Config{Env: Env{Set: []string{"NOVALUE"}}}, `env "NOVALUE"`},
		{"env empty name", Config{Env: Env{Set: []string{"=x"}}}, `env "=x"`},
		{"passthrough with equals", Config{Env: Env{Passthrough: []string{"A=B"}}}, `passthrough "A=B"`},
		{"grant relative", Config{Grants: []Grant{{Path: "rel", Access: READ}}}, `grant "rel"`},
		{"grant unclean", Config{Grants: []Grant{{Path: dir + "/../x", Access: READ}}}, "absolute and clean"},
		{"grant missing", Config{Grants: []Grant{{Path: "/definitely/not/a/real/path", Access: READ}}}, `grant "/definitely/not/a/real/path"`},
		{"grant no access", Config{Grants: []Grant{{Path: dir}}}, "invalid access"},
		{"grant unknown bits", Config{Grants: []Grant{{Path: dir, Access: 0x40}}}, "invalid access"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := normalize(tc.cfg, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("normalize: got %v, want an error containing %q", err, tc.want)
			}
			if strings.HasPrefix(err.Error(), "moat: ") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q is not one line without the moat: prefix", err)
			}
		})
	}
}

func TestGrantsUnionPerPath(t *testing.T) {
	dir := t.TempDir()
	cfg, err := normalize(Config{Grants: []Grant{
		{Path: dir, Access: WRITE},
		{Path: dir, Access: EXEC},
		{Path: "/usr", Access: READ},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{dir: "rwx", "/usr": "r"}
	if len(cfg.Grants) != 2 {
		t.Fatalf("grants = %v", cfg.Grants)
	}
	for _, g := range cfg.Grants {
		if g.Access.String() != want[g.Path] {
			t.Errorf("%s: access %s, want %s", g.Path, g.Access, want[g.Path])
		}
	}
}

func TestAccessString(t *testing.T) {
	cases := map[Access]string{0: "-", READ: "r", WRITE: "rw", EXEC: "rx", WRITE | EXEC: "rwx", READ | WRITE: "rw"}
	for a, want := range cases {
		if got := a.String(); got != want {
			t.Errorf("Access(%d).String() = %q, want %q", a, got, want)
		}
	}
}

func TestLimitDefaults(t *testing.T) {
	cases := []struct {
		name string
		in   Limits
		chk  func(Limits) bool
	}{
		{"zero gets defaults", Limits{}, func(l Limits) bool {
			return l.MemoryBytes > 0 && l.FileSizeBytes == DefaultFileSizeBytes && l.Processes == DefaultProcesses &&
				l.OpenFiles > 0 && l.OpenFiles <= DefaultOpenFiles && l.CPUSeconds == 0 && l.Timeout == 0
		}},
		{"negative means none", Limits{MemoryBytes: -1, Processes: -1, OpenFiles: -1, FileSizeBytes: -1, DiskBytes: -1}, func(l Limits) bool {
			return l.MemoryBytes == 0 && l.Processes == 0 && l.OpenFiles == 0 && l.FileSizeBytes == 0 && l.DiskBytes == 0
		}},
		{"explicit kept", Limits{MemoryBytes: 1 << 20, CPUSeconds: 3}, func(l Limits) bool {
			return l.MemoryBytes == 1<<20 && l.CPUSeconds == 3
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.in.withDefaults(); !tc.chk(got) {
				t.Fatalf("withDefaults(%+v) = %+v", tc.in, got)
			}
		})
	}
}

func TestIOPriorityParse(t *testing.T) {
	for _, s := range []string{"utility", "background", "default"} {
		var p IOPriority
		err := p.UnmarshalText([]byte(s))
		if err != nil || p.String() != s {
			t.Errorf("UnmarshalText(%q) = %v, %v", s, p, err)
		}
	}
	if p := IOPriorityUtility; p.UnmarshalText([]byte("realtime")) == nil || p != IOPriorityUtility {
		t.Error("realtime accepted")
	}
}

func TestCommandEnv(t *testing.T) {
	base := []string{"PATH=/bin", "HOME=/w", "TMPDIR=/w"}
	got := commandEnv(base, []string{"TMPDIR=/custom", "LD_PRELOAD=/x.so", "DYLD_INSERT_LIBRARIES=y", "_MOAT_HELPER_ROLE=run", "FOO=bar"})
	want := "PATH=/bin HOME=/w TMPDIR=/custom FOO=bar"
	if strings.Join(got, " ") != want {
		t.Fatalf("commandEnv = %q, want %q", got, want)
	}
	if base[2] != "TMPDIR=/w" {
		t.Fatal("commandEnv modified its base")
	}
}

func TestUnsupportedErrorMatches(t *testing.T) {
	err := error(&UnsupportedError{Missing: []string{"landlock: off"}})
	if !errors.Is(err, ErrUnsupported) {
		t.Fatal("UnsupportedError does not match ErrUnsupported")
	}
	if strings.HasPrefix(err.Error(), "moat: ") {
		t.Fatalf("message %q", err)
	}
}

func TestExitErrorCodes(t *testing.T) {
	cases := []struct {
		name         string
		script       string
		reason       string
		code, status int
		msg          string
		signalled    bool
	}{
		{"exit 3", "exit 3", "", 3, 3, "exit status 3", false},
		{"killed", "kill -KILL $$", "", -1, 137, "signal: killed", true},
		{"timeout", "kill -KILL $$", "timeout after 1s", -1, 137, "signal: killed (timeout after 1s)", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := exec.Command("/bin/sh", "-c", tc.script)
			c.Run()
			e := &ExitError{ProcessState: c.ProcessState, reason: tc.reason}
			if e.ExitCode() != tc.code || e.StatusCode() != tc.status || e.Error() != tc.msg || (e.Signal() != nil) != tc.signalled {
				t.Fatalf("got code %d status %d msg %q signal %v", e.ExitCode(), e.StatusCode(), e.Error(), e.Signal())
			}
		})
	}
}
