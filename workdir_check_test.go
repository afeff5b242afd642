package moat

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckWorkDir(t *testing.T) {
	base := t.TempDir()
	mk := func(rel string) string {
		p := filepath.Join(base, rel)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	home := mk("home/u")
	mk("home/u/.local/bin")
	proj := mk("home/u/proj")
	tools := mk("tools/bin")
	link := filepath.Join(base, "link-home")
	os.Symlink(home, link)
	t.Setenv("HOME", home)
	t.Setenv("PATH", tools+":/usr/bin:/bin")
	for _, tc := range []struct {
		name, dir string
		allow     bool
		want      string // "" means allowed
		unsafe    bool
	}{
		{"root", "/", false, "root directory", true},
		{"root even allowed", "/", true, "root directory", true},
		{"proc", "/proc", false, "kernel file system", true},
		{"in proc", "/proc/self/fd", true, "kernel file system", true},
		{"sys", "/sys/kernel", false, "kernel file system", true},
		{"dev", "/dev", false, "kernel file system", true},
		{"usr", "/usr", true, "system directory", true},
		{"tmp", "/tmp", true, "system directory", true},
		{"home", home, false, "Config.AllowHomeWorkDir", true},
		{"home through a link", link, false, "Config.AllowHomeWorkDir", true},
		{"above the home", filepath.Dir(home), false, "Config.AllowHomeWorkDir", true},
		{"local bin", filepath.Join(home, ".local/bin"), false, ".local/bin", true},
		{"local", filepath.Join(home, ".local"), false, "Config.AllowHomeWorkDir", true},
		{"holds PATH dir", filepath.Dir(tools), false, "PATH", true},
		{"home allowed", home, true, "", false},
		{"project in the home", proj, false, "", false},
		{"missing: left to New", filepath.Join(base, "missing"), false, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckWorkDir(tc.dir, tc.allow)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("CheckWorkDir(%s) = %v, want nil", tc.dir, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("CheckWorkDir(%s) = %v, want it to mention %q", tc.dir, err, tc.want)
			case err != nil && errors.Is(err, ErrUnsafeWorkDir) != tc.unsafe:
				t.Fatalf("errors.Is(%v, ErrUnsafeWorkDir) = %v", err, !tc.unsafe)
			case err != nil && !strings.HasPrefix(err.Error(), "workdir "):
				t.Fatalf("error %q does not read workdir ...", err)
			}
			// What AllowHomeWorkDir lifts carries its setting id, for the
			// CLI to name by its flag; nothing else names a setting.
			var se *SettingError
			if lifts := err != nil && strings.Contains(err.Error(), "Config.AllowHomeWorkDir"); lifts != (errors.As(err, &se) && se.Setting == "workdir.allow-home") {
				t.Fatalf("CheckWorkDir(%s) = %v: lifted by AllowHomeWorkDir %v, but its *SettingError is %+v", tc.dir, err, lifts, se)
			}
		})
	}
}

// New refuses what CheckWorkDir refuses, a grant of the root and too few
// open files, before creating anything.
func TestNewRefusesPlaces(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"workdir root", Config{WorkDir: "/"}, "root directory"},
		{"grant root", Config{Grants: []Grant{{Path: "/", Access: READ}}}, "root directory"},
		{"open files", Config{Limits: Limits{OpenFiles: 3}}, "at least 32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb, err := New(tc.cfg)
			if err == nil {
				sb.Close()
				t.Fatalf("New accepted %+v", tc.cfg)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: %v, want it to mention %q", err, tc.want)
			}
			if ents, _ := os.ReadDir(os.Getenv("TMPDIR")); len(ents) > 0 {
				t.Fatalf("a refused New left %s", ents[0].Name())
			}
		})
	}
}

func TestCheckAuditLogPath(t *testing.T) {
	base := t.TempDir()
	mk := func(rel string) string {
		p := filepath.Join(base, rel)
		os.MkdirAll(p, 0o755)
		return p
	}
	work, rw, ro, out := mk("work"), mk("rw"), mk("ro"), mk("out")
	os.Symlink(work, filepath.Join(base, "to-work"))
	os.Symlink(filepath.Join(rw, "x.jsonl"), filepath.Join(out, "into-rw.jsonl"))
	os.WriteFile(filepath.Join(out, "linked.jsonl"), nil, 0o600)
	os.Link(filepath.Join(out, "linked.jsonl"), filepath.Join(work, "hard.jsonl"))
	cfg := Config{WorkDir: work, Grants: []Grant{{Path: rw, Access: READ | WRITE}, {Path: ro, Access: READ}}}
	perm := cfg
	perm.Isolation = IsolationPermissive
	// A protected path hides the log from a permissive sandbox, unless a
	// grant names it: then it is exposed, and writable at that level.
	home := mk("home")
	ssh := mk("home/.ssh")
	t.Setenv("HOME", home)
	permSSH := perm
	permSSH.Grants = append(append([]Grant(nil), perm.Grants...), Grant{Path: ssh, Access: READ})
	for _, tc := range []struct {
		name, path string
		cfg        Config
		want       string
	}{
		{"in the workdir", filepath.Join(work, "a.jsonl"), cfg, "working directory"},
		{"the workdir itself (daily)", work, cfg, "working directory"},
		{"in a writable grant", filepath.Join(rw, "a.jsonl"), cfg, "writable grant"},
		{"through a linked directory", filepath.Join(base, "to-work", "a.jsonl"), cfg, "working directory"},
		{"a link into a grant", filepath.Join(out, "into-rw.jsonl"), cfg, "writable grant"},
		{"hard-linked into the workdir", filepath.Join(out, "linked.jsonl"), cfg, "hard links"},
		{"at permissive", filepath.Join(out, "a.jsonl"), perm, "permissive"},
		{"at permissive, protected", filepath.Join(ssh, "a.jsonl"), perm, ""},
		{"at permissive, protected but granted", filepath.Join(ssh, "a.jsonl"), permSSH, "permissive"},
		{"in a read-only grant", filepath.Join(ro, "a.jsonl"), cfg, ""},
		{"outside", filepath.Join(out, "a.jsonl"), cfg, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckAuditLogPath(tc.path, tc.cfg)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("CheckAuditLogPath(%s) = %v, want nil", tc.path, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("CheckAuditLogPath(%s) = %v, want it to mention %q", tc.path, err, tc.want)
			}
		})
	}
}
